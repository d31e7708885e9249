/* ONNX RMSNormalization (docs/onnx.md). */
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "framework/step.h"
#include "isa/unary.h"
#include "graph/ops/reduce/reduce_util.h"

static int rms_norm_load(sb_load_ctx *L)
{
    axis_eps_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int(L, "axis", -1);
    s->eps = sb_attr_float(L, "epsilon", 1e-5f);
    int64_t stash = sb_attr_int(L, "stash_type", 1);
    if (L->status) return L->status;
    if (stash != 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "stash_type other than 1 (float32) is not "
                            "supported");
    return L->status;
}

static int rms_norm_infer(sb_infer_ctx *I)
{
    const axis_eps_state *s = I->state;
    const sb_tval *x = need_float(I, 0, "X");
    if (!x) return SB_ERR_TYPE;
    int a, status = sb_infer_axis(I, s->axis, x->info.rank, "axis", &a);
    if (status) return status;
    sb_vinfo norm;
    trailing_shape(&x->info, a, &norm);
    const sb_tval *scale = need_float(I, 1, "scale");
    if (!scale) return SB_ERR_TYPE;
    const sb_vinfo *pair[2] = {&scale->info, &norm};
    sb_vinfo b;
    if ((status = sb_infer_broadcast(I, pair, 2, &b))) return status;
    if (!sb_vinfo_same_shape(&b, &norm)) {
        char ts[256], ns[256];
        sb_shape_text(&scale->info, ts, sizeof ts);
        sb_shape_text(&norm, ns, sizeof ns);
        return sb_infer_fail(I, SB_ERR_VALUE, "scale %s does not broadcast to the normalized "
                             "shape %s", ts, ns);
    }
    I->out[0] = x->info;
    int64_t total = sb_vinfo_numel(&x->info);
    if (total == 0) return SB_OK;
    int64_t rows = total / sb_vinfo_numel(&norm);
    I->workspace = (int64_t)(align64(total * 4) + align64(rows * 4));
    return SB_OK;
}

static int rms_norm_run(sb_run_ctx *R)
{
    const axis_eps_state *s = R->state;
    const sb_tval *x = R->in[0];
    int r = x->info.rank;
    int a = r ? (int)((s->axis + r) % r) : 0;
    int64_t total = sb_vinfo_numel(&x->info);
    if (total == 0) return SB_OK;
    int64_t n = prod_dims(x->info.dims, a, r), rows = total / n;
    uint8_t *ws = R->workspace;
    float *P = (float *)ws, *M = (float *)(ws + align64(total * 4));
    sb_tval xr = ftensor(&x->info, x->data);
    xr.info.rank = 2, xr.info.dims[0] = rows, xr.info.dims[1] = n;
    sb_tval p = xr;
    p.data = P;
    sb_tval m = xr;
    m.info.dims[1] = 1;
    m.data = M;
    int status;
    /* ms = mean(x * x) per row; d = sqrt(ms + eps); y = (x / d) * scale */
    if ((status = sb_k_binary(R, SB_BIN_MUL, &xr, &xr, &p))) return kfail(R, status, "sb_binary");
    if ((status = k_reduce(R, 1, rows, n, 1, P, M, NULL, NULL, 0.0f))) return status;
    if ((status = sb_k_binary_scalar(R, SB_BIN_ADD, &m, s->eps, &m))) return kfail(R, status, "sb_binary");
    if ((status = sb_k_unary(R, SB_OP_SQRT, 0.0f, &m, &m))) return kfail(R, status, "sb_unary");
    if ((status = sb_k_binary(R, SB_BIN_DIV, &xr, &m, &p))) return kfail(R, status, "sb_binary");
    sb_tval q = ftensor(&x->info, P);
    return kfail(R, sb_k_binary(R, SB_BIN_MUL, &q, R->in[1], R->out[0]), "sb_binary");
}

const sb_op_def sb_op_RMSNormalization = {
    .name = "RMSNormalization", .load = rms_norm_load, .infer = rms_norm_infer, .run = rms_norm_run};
