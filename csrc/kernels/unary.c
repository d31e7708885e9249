/* sb_unary: an elementwise function over a float32 array, cut into fixed
 * chunks (framework/step.h) that the thread pool runs. A chunk's elements
 * are computed the same way whichever thread runs it, so the thread count
 * never changes a bit. */
#include <stdint.h>
#include <string.h>
#include "samebits.h"
#include "isa/isa.h"
#include "framework/step.h"
#include "kernels/prepared.h"

typedef struct {
    const sb_unary_call *call;
    const float *x;
    float *y;
} unary_job;

static void unary_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const unary_job *job = (const unary_job *)ctx;
    const sb_unary_call *call = job->call;
    size_t first, end;
    sb_step_units(&call->plan, chunk, &first, &end);
    call->kernel(call->op, call->param, job->x + first, job->y + first, end - first);
}

int sb_unary_prepare(const sb_unary_args *args, sb_unary_call *call)
{
    if (!args) return SB_ERR_ARGUMENT;
    if (args->mode != SB_MODE_FAST && args->mode != SB_MODE_EXACT) return SB_ERR_ARGUMENT;
    if (args->op < 0 || args->op >= SB_OP_COUNT || args->max_threads < 1) return SB_ERR_ARGUMENT;
    /* The parameter: binary32 bits, only for leaky_relu (the slope), ONNX's
     * hardsigmoid (alpha) and elu (alpha); 0 for the others. */
    if (args->param < 0 || args->param > (int64_t)UINT32_MAX) return SB_ERR_ARGUMENT;
    if (args->op != SB_OP_LEAKY_RELU && args->op != SB_OP_HARDSIGMOID_ONNX && args->op != SB_OP_ELU &&
        args->param != 0)
        return SB_ERR_ARGUMENT;
    uint32_t param_bits = (uint32_t)args->param;
    if (args->count < 0 || (uint64_t)args->count > (uint64_t)(SIZE_MAX / sizeof(float)))
        return SB_ERR_ARGUMENT;
    if (args->path < 0 || args->path > INT32_MAX) return SB_ERR_PATH;
    const sb_isa *isa = sb_isa_supported((int)args->path);
    if (!isa) return SB_ERR_PATH;
    memset(call, 0, sizeof *call);
    call->kernel = args->mode == SB_MODE_EXACT ? isa->unary->exact : isa->unary->fast;
    call->op = (int)args->op;
    memcpy(&call->param, &param_bits, sizeof call->param);
    call->count = (size_t)args->count;
    call->plan = sb_plan_step(call->count, SB_STEP_CHUNK_ITEMS, (double)call->count * SB_COST_UNARY);
    return SB_OK;
}

void sb_unary_run_prepared(const sb_unary_call *call, const float *x, float *y, int max_threads)
{
    if (call->count == 0) return;
    unary_job job = {.call = call, .x = x, .y = y};
    sb_run_step(&call->plan, max_threads, unary_chunk, &job);
}

int sb_unary(const sb_unary_args *args)
{
    sb_unary_call call;
    int status = sb_unary_prepare(args, &call);
    if (status != SB_OK || call.count == 0) return status;
    const float *x = (const float *)(intptr_t)args->x;
    float *y = (float *)(intptr_t)args->y;
    size_t count = call.count;
    if (!x || !y) return SB_ERR_ARGUMENT;
    /* In place, or apart: a partial overlap would read outputs as inputs. */
    if (x != y && (uintptr_t)x < (uintptr_t)(y + count) && (uintptr_t)y < (uintptr_t)(x + count))
        return SB_ERR_ARGUMENT;
    sb_unary_run_prepared(&call, x, y, (int)(args->max_threads > INT32_MAX ? INT32_MAX : args->max_threads));
    return SB_OK;
}
