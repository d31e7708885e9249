/* sb_binary: an elementwise operation of two float32 operands with numpy
 * broadcasting (arith.h defines the operations). The output is dense in C
 * order; each operand is read through element strides, 0 along a broadcast
 * dimension. Dimensions both operands walk as one (each stride the next
 * one's times its extent) are merged first, so that rows are long; the rows
 * are cut into pieces of at most PIECE elements, and the pieces grouped
 * into fixed chunks for the thread pool. Each row runs the path's row kernel
 * (isa/unary_template.h: the compiler vectorizes it); every element is one
 * IEEE operation computed on its own, so neither the path, the chunking nor
 * the thread count can change a bit. */
#include <stdint.h>
#include <string.h>
#include "samebits.h"
#include "isa/isa.h"
#include "framework/checked.h"
#include "framework/step.h"
#include "framework/walk.h"
#include "kernels/strided_rows.h"
#include "kernels/prepared.h"

typedef struct {
    const sb_binary_call *call;
    const float *a, *b;
    float *y;
} binary_job;

/* Elements per piece of a row: a chunk's worth (step.h). */
#define PIECE SB_STEP_CHUNK_ITEMS

static void binary_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const binary_job *job = (const binary_job *)ctx;
    const sb_binary_call *call = job->call;
    const int64_t *shape = call->shape, *sa = call->a_stride, *sb = call->b_stride;
    const int last = call->ndim - 1;
    const ptrdiff_t step_a = (ptrdiff_t)sa[last], step_b = (ptrdiff_t)sb[last];
    size_t unit0, unit_end;
    sb_step_units(&call->plan, chunk, &unit0, &unit_end);
    for (size_t unit = unit0; unit < unit_end; ++unit) {
        const size_t row = unit / call->pieces, j0 = (unit % call->pieces) * PIECE;
        const size_t n = call->cols - j0 < PIECE ? call->cols - j0 : PIECE;
        ptrdiff_t oa, ob;
        sb_row_offsets(row, call->ndim, shape, sa, sb, &oa, &ob);
        call->row(call->op, job->a + oa + (ptrdiff_t)j0 * step_a, step_a,
                  job->b + ob + (ptrdiff_t)j0 * step_b, step_b, job->y + row * call->cols + j0, n);
    }
}

/* The element offsets an operand reaches: within +-SB_MAX_SIZE * 2^22 per
 * dimension, so that no offset sum can overflow. */
static int strides_ok(const sb_binary_args *args, const int64_t *stride)
{
    for (int64_t d = 0; d < args->ndim; ++d)
        if (stride[d] < -(SB_MAX_SIZE << 20) || stride[d] > (SB_MAX_SIZE << 20)) return 0;
    return 1;
}

int sb_binary_prepare(const sb_binary_args *args, sb_binary_call *call)
{
    if (!args) return SB_ERR_ARGUMENT;
    if (args->mode != SB_MODE_FAST && args->mode != SB_MODE_EXACT) return SB_ERR_ARGUMENT;
    if (args->op < 0 || args->op >= SB_BIN_COUNT || args->max_threads < 1) return SB_ERR_ARGUMENT;
    if (args->ndim < 1 || args->ndim > SB_MAX_BATCH_DIMS) return SB_ERR_ARGUMENT;
    /* The operations are single IEEE operations, the same on every path;
     * the path picks the row kernel's vector width. */
    if (args->path < 0 || args->path > INT32_MAX || !sb_path_supported((int)args->path))
        return SB_ERR_PATH;
    size_t total = 1;
    for (int64_t d = 0; d < args->ndim; ++d) {
        if (args->shape[d] < 0 || args->shape[d] > SB_MAX_SIZE) return SB_ERR_ARGUMENT;
        if (!sb_mul_ok(total, (size_t)args->shape[d], &total) ||
            total > SIZE_MAX / sizeof(float))
            return SB_ERR_ARGUMENT;
    }
    if (!strides_ok(args, args->a_stride) || !strides_ok(args, args->b_stride))
        return SB_ERR_ARGUMENT;
    memset(call, 0, sizeof *call);
    call->op = (int)args->op;
    call->row = sb_isa_supported((int)args->path)->unary->binary_row;
    call->total = total;
    if (total == 0) return SB_OK;
    /* Dimensions of extent 1 dropped and neighbours both operands step
     * through as through one merged (the output is dense, so it always
     * does): long rows. */
    call->ndim = (int)args->ndim;
    memcpy(call->shape, args->shape, (size_t)args->ndim * sizeof args->shape[0]);
    memcpy(call->a_stride, args->a_stride, (size_t)args->ndim * sizeof args->a_stride[0]);
    memcpy(call->b_stride, args->b_stride, (size_t)args->ndim * sizeof args->b_stride[0]);
    int64_t *strides[2] = {call->a_stride, call->b_stride};
    const int nd = call->ndim = sb_merge_walk(call->ndim, call->shape, 2, strides);
    call->cols = (size_t)call->shape[nd - 1];
    call->pieces = sb_ceil_div(call->cols, PIECE);
    const size_t piece = call->cols < PIECE ? call->cols : PIECE;
    double ns_per_element = args->op == SB_BIN_POW ? SB_COST_POW : SB_COST_MOVE;
    call->plan = sb_plan_step(total / call->cols * call->pieces, sb_units_per_chunk(piece, PIECE),
                              (double)total * ns_per_element);
    return SB_OK;
}

void sb_binary_run_prepared(const sb_binary_call *call, const float *a, const float *b, float *y,
                            int max_threads)
{
    if (call->total == 0) return;
    binary_job job = {.call = call, .a = a, .b = b, .y = y};
    sb_run_step(&call->plan, max_threads, binary_chunk, &job);
}

int sb_binary(const sb_binary_args *args)
{
    sb_binary_call call;
    int status = sb_binary_prepare(args, &call);
    if (status != SB_OK || call.total == 0) return status;
    if (!args->a || !args->b || !args->y) return SB_ERR_ARGUMENT;
    sb_binary_run_prepared(&call, (const float *)(intptr_t)args->a, (const float *)(intptr_t)args->b,
                           (float *)(intptr_t)args->y, (int)(args->max_threads > INT32_MAX ? INT32_MAX
                                                                : args->max_threads));
    return SB_OK;
}
