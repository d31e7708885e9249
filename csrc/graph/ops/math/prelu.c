/* ONNX PRelu (docs/onnx.md). */
#include <string.h>
#include "math/arith.h"
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "isa/unary.h"
#include "graph/ops/math/math_util.h"

static int prelu_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_float(I, 0, "X");
    if (!x) return SB_ERR_TYPE;
    const sb_tval *slope = sb_infer_float(I, 1, "slope");
    if (!slope) return SB_ERR_TYPE;
    I->out[0] = x->info;
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    const sb_vinfo *shapes[2] = {&x->info, &slope->info};
    sb_vinfo shape;
    int status = sb_infer_broadcast(I, shapes, 2, &shape);
    if (status) return status;
    if (!sb_vinfo_same_shape(&shape, &x->info)) {
        char ss[256], xs[256];
        sb_shape_text(&slope->info, ss, sizeof ss);
        sb_shape_text(&x->info, xs, sizeof xs);
        return sb_infer_fail(I, SB_ERR_VALUE, "slope %s must broadcast to X %s", ss, xs);
    }
    I->workspace = sb_vinfo_bytes(&x->info);   /* slope * x; y holds x * 1 */
    return SB_OK;
}

static int prelu_run(sb_run_ctx *R)
{
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    int64_t n = sb_vinfo_numel(&x->info);
    if (n == 0) return SB_OK;
    sb_tval scaled = *y;
    scaled.data = R->workspace;
    int status = sb_k_binary(R, SB_BIN_MUL, x, R->in[1], &scaled);
    if (status) return status;
    if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, x, 1.0f, y))) return status;
    /* slope * x where x < 0 (negative and not NaN, -0 excluded), x * 1 elsewhere */
    const uint32_t *xb = x->data, *sc = scaled.data;
    uint32_t *yb = y->data;
    for (int64_t i = 0; i < n; ++i) {
        uint32_t b = xb[i], m = b & 0x7FFFFFFFu;
        if ((b & 0x80000000u) && m && m <= 0x7F800000u) yb[i] = sc[i];
    }
    return SB_OK;
}

const sb_op_def sb_op_PRelu = {.name = "PRelu", .infer = prelu_infer, .run = prelu_run};
