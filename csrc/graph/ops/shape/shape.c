/* ONNX Shape and Size (docs/onnx.md): read only their input's info. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

/* ---- Shape ------------------------------------------------------------------ */

typedef struct { int64_t start, end; int has_end; } shape_state;

static int shape_load(sb_load_ctx *L)
{
    shape_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->start = sb_attr_int(L, "start", 0);
    s->has_end = sb_has_attr(L, "end");
    s->end = sb_attr_int(L, "end", 0);
    return L->status;
}

static void shape_range(const shape_state *s, int r, int *first, int *last)
{
    int64_t a = s->start < 0 ? s->start + r : s->start;
    int64_t e = !s->has_end ? r : s->end < 0 ? s->end + r : s->end;
    a = a < 0 ? 0 : a > r ? r : a;
    e = e < 0 ? 0 : e > r ? r : e;
    *first = (int)a, *last = (int)(e > a ? e : a);
}

static int shape_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    int a, e;
    shape_range(I->state, x->info.rank, &a, &e);
    I->out[0].dtype = SB_DT_INT64;
    I->out[0].rank = 1;
    I->out[0].dims[0] = e - a;
    return SB_OK;
}

static int shape_run(sb_run_ctx *R)
{
    int a, e;
    shape_range(R->state, R->in[0]->info.rank, &a, &e);
    for (int d = a; d < e; ++d) ((int64_t *)R->out[0]->data)[d - a] = R->in[0]->info.dims[d];
    return SB_OK;
}

/* ---- Size ------------------------------------------------------------------------ */

static int size_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    I->out[0].dtype = SB_DT_INT64;
    I->out[0].rank = 0;
    return SB_OK;
}

static int size_run(sb_run_ctx *R)
{
    *(int64_t *)R->out[0]->data = sb_vinfo_numel(&R->in[0]->info);
    return SB_OK;
}

const sb_op_def sb_op_Shape = {
    .name = "Shape", .load = shape_load, .infer = shape_infer, .run = shape_run, .flags = SB_OP_SHAPE_ONLY};
const sb_op_def sb_op_Size = {
    .name = "Size", .infer = size_infer, .run = size_run, .flags = SB_OP_SHAPE_ONLY};
