/* ONNX Softmax and LogSoftmax (docs/onnx.md). */
#include <string.h>
#include "math/arith.h"
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "isa/unary.h"
#include "graph/ops/math/math_util.h"

typedef struct { int64_t axis; int flat, log_form; } softmax_state;

static int softmax_load(sb_load_ctx *L)
{
    softmax_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->flat = L->opset < 13;   /* before opset 13: the input as 2-D, [:axis] by [axis:] */
    s->axis = sb_attr_int(L, "axis", s->flat ? 1 : -1);
    s->log_form = !strcmp(L->node->op_type, "LogSoftmax");
    return L->status;
}

/* x as (outer, n, inner) with the softmax over n. */
static int softmax_dims(sb_infer_ctx *I, const sb_vinfo *x, int64_t *outer, int64_t *n, int64_t *inner)
{
    const softmax_state *s = I->state;
    int a = 0;
    if (!s->flat || x->rank) {
        int status = sb_infer_axis(I, s->axis, x->rank, "axis", &a);
        if (status) return status;
    }
    *outer = 1, *n = 1, *inner = 1;
    for (int d = 0; d < x->rank; ++d) {
        if (d < a) *outer *= x->dims[d];
        else if (d == a || s->flat) *n *= x->dims[d];
        else *inner *= x->dims[d];
    }
    return SB_OK;
}

static int softmax_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_float(I, 0, "input");
    if (!x) return SB_ERR_TYPE;
    I->out[0] = x->info;
    /* softmax writes over its input safely; log_softmax along rows would
     * have the kernel copy its input first (reduce.c), so it never shares */
    const softmax_state *s = I->state;
    I->inplace = s->log_form ? -1 : 0;
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    int64_t outer, n, inner;
    return softmax_dims(I, &x->info, &outer, &n, &inner);
}

/* The kernel's arguments for x, without the pointers. */
static int softmax_args(const sb_node *node, const void *state, int path, int mode, const sb_vinfo *x,
                        sb_reduce_args *args)
{
    const softmax_state *s = state;
    sb_infer_ctx I;
    memset(&I, 0, sizeof I);
    I.node = node, I.state = state;
    int64_t outer, n, inner;
    int status = softmax_dims(&I, x, &outer, &n, &inner);
    if (status) return status;
    memset(args, 0, sizeof *args);
    args->path = path, args->mode = mode;
    args->op = s->log_form ? SB_RED_LOG_SOFTMAX : SB_RED_SOFTMAX;
    args->outer = outer, args->n = n, args->inner = inner;
    return SB_OK;
}

static int softmax_prepare(sb_prepare_ctx *P)
{
    if (sb_vinfo_numel(&P->in[0]->info) == 0) return SB_OK;
    int status = softmax_args(P->node, P->state, P->path, P->mode, &P->in[0]->info, P->prepared);
    if (!status) P->bytes = sizeof(sb_reduce_args);
    return status;
}

static int softmax_run(sb_run_ctx *R)
{
    const sb_tval *x = R->in[0];
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    sb_reduce_args args;
    if (R->prepared) {
        memcpy(&args, R->prepared, sizeof args);
    } else {
        int status = softmax_args(R->node, R->state, R->path, R->mode, &x->info, &args);
        if (status) return status;
    }
    args.max_threads = R->threads;
    args.x = (int64_t)(intptr_t)x->data, args.y = (int64_t)(intptr_t)R->out[0]->data;
    return sb_reduce(&args);
}

const sb_op_def sb_op_Softmax = {
    .name = "Softmax", .load = softmax_load, .infer = softmax_infer, .run = softmax_run,
    .prepare = softmax_prepare};
const sb_op_def sb_op_LogSoftmax = {
    .name = "LogSoftmax", .load = softmax_load, .infer = softmax_infer, .run = softmax_run,
    .prepare = softmax_prepare};
