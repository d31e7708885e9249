/* sb_binary: an elementwise operation of two float32 operands with numpy
 * broadcasting (arith.h defines the operations). The output is dense in C
 * order; each operand is read through element strides, 0 along a broadcast
 * dimension. The output's rows (its last dimension) are cut into fixed
 * chunks for the thread pool; every element is computed on its own, so
 * neither the chunking nor the thread count can change a bit. */
#include <stdint.h>
#include <string.h>
#include "samebits.h"
#include "math/arith.h"
#include "framework/checked.h"
#include "framework/step.h"
#include "kernels/strided_rows.h"
#include "kernels/prepared.h"

typedef struct {
    const sb_binary_call *call;
    const float *a, *b;
    float *y;
} binary_job;

/* One row: y[j] = op(a[j*sa], b[j*sb]), with the common stride pairs
 * written out so that the compiler vectorizes them. */
#define ROW_LOOP(fn)                                                                         \
    if (sa == 1 && sb == 1) for (size_t j = 0; j < n; ++j) y[j] = fn(a[j], b[j]);            \
    else if (sa == 1 && sb == 0) { float bv = b[0];                                          \
        for (size_t j = 0; j < n; ++j) y[j] = fn(a[j], bv); }                                \
    else if (sa == 0 && sb == 1) { float av = a[0];                                          \
        for (size_t j = 0; j < n; ++j) y[j] = fn(av, b[j]); }                                \
    else for (size_t j = 0; j < n; ++j) y[j] = fn(a[(ptrdiff_t)j * sa], b[(ptrdiff_t)j * sb]); \
    break;

static void binary_row(int op, const float *a, ptrdiff_t sa, const float *b, ptrdiff_t sb,
                       float *y, size_t n)
{
    switch (op) {
    case SB_BIN_ADD: ROW_LOOP(sb_bin_add)
    case SB_BIN_SUB: ROW_LOOP(sb_bin_sub)
    case SB_BIN_MUL: ROW_LOOP(sb_bin_mul)
    case SB_BIN_DIV: ROW_LOOP(sb_bin_div)
    case SB_BIN_MAXIMUM: ROW_LOOP(sb_bin_maximum)
    case SB_BIN_MINIMUM: ROW_LOOP(sb_bin_minimum)
    case SB_BIN_POW: ROW_LOOP(sb_bin_pow)
    default: break;
    }
}

static void binary_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const binary_job *job = (const binary_job *)ctx;
    const sb_binary_call *call = job->call;
    const int64_t *shape = call->shape, *sa = call->a_stride, *sb = call->b_stride;
    int last = call->ndim - 1;
    size_t row0, row_end;
    sb_step_units(&call->plan, chunk, &row0, &row_end);
    for (size_t row = row0; row < row_end; ++row) {
        ptrdiff_t oa, ob;
        sb_row_offsets(row, call->ndim, shape, sa, sb, &oa, &ob);
        binary_row(call->op, job->a + oa, (ptrdiff_t)sa[last], job->b + ob, (ptrdiff_t)sb[last],
                   job->y + row * call->cols, call->cols);
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
    /* The operations are single IEEE operations, the same on every path:
     * the path is checked for a uniform API, and the loops are plain C. */
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
    call->ndim = (int)args->ndim;
    memcpy(call->shape, args->shape, (size_t)args->ndim * sizeof args->shape[0]);
    memcpy(call->a_stride, args->a_stride, (size_t)args->ndim * sizeof args->a_stride[0]);
    memcpy(call->b_stride, args->b_stride, (size_t)args->ndim * sizeof args->b_stride[0]);
    call->total = total;
    if (total == 0) return SB_OK;
    call->cols = (size_t)args->shape[args->ndim - 1];
    double ns_per_element = args->op == SB_BIN_POW ? SB_COST_POW : SB_COST_MOVE;
    call->plan = sb_plan_step(total / call->cols, sb_units_per_chunk(call->cols, SB_STEP_CHUNK_ITEMS),
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
