/* ONNX Where (docs/onnx.md). */
#include <string.h>
#include "math/arith.h"
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "isa/unary.h"
#include "graph/ops/math/math_util.h"

static int where_infer(sb_infer_ctx *I)
{
    const sb_tval *c = sb_infer_int(I, 0, "condition");
    if (!c) return SB_ERR_TYPE;
    const sb_tval *x = sb_infer_input(I, 1, "X");
    if (!x) return SB_ERR_VALUE;
    const sb_tval *y = sb_infer_input(I, 2, "Y");
    if (!y) return SB_ERR_VALUE;
    if ((x->info.dtype == SB_DT_FLOAT) != (y->info.dtype == SB_DT_FLOAT))
        return sb_infer_fail(I, SB_ERR_TYPE, "X and Y must have the same type");
    const sb_vinfo *shapes[3] = {&c->info, &x->info, &y->info};
    int status = sb_infer_broadcast(I, shapes, 3, &I->out[0]);
    if (status) return status;
    I->out[0].dtype = x->info.dtype;
    if (sb_vinfo_same_shape(&x->info, &I->out[0])) I->inplace = 1;
    return SB_OK;
}

static int where_run(sb_run_ctx *R)
{
    const sb_tval *c = R->in[0], *x = R->in[1], *yv = R->in[2];
    sb_tval *out = R->out[0];
    int64_t n = sb_vinfo_numel(&out->info);
    const sb_tval *ops[3] = {c, x, yv};
    bwalk w;
    bwalk_init(&w, &out->info, ops, 3);
    if (out->info.dtype == SB_DT_FLOAT) {   /* the bits copied */
        const uint32_t *xb = x->data, *yb = yv->data;
        uint32_t *ob = out->data;
        for (int64_t i = 0; i < n; ++i, bwalk_next(&w))
            ob[i] = sb_int_at(c, w.off[0]) ? xb[w.off[1]] : yb[w.off[2]];
        return SB_OK;
    }
    for (int64_t i = 0; i < n; ++i, bwalk_next(&w))
        sb_int_store(out->data, out->info.dtype, i,
                     sb_int_at(c, w.off[0]) ? sb_int_at(x, w.off[1]) : sb_int_at(yv, w.off[2]));
    return SB_OK;
}

const sb_op_def sb_op_Where = {.name = "Where", .infer = where_infer, .run = where_run};
