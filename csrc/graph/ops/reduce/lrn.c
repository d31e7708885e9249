/* ONNX LRN (docs/onnx.md). */
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "framework/step.h"
#include "isa/unary.h"
#include "graph/ops/reduce/reduce_util.h"

typedef struct { int64_t size; float alpha, beta, bias; } lrn_state;

static int lrn_load(sb_load_ctx *L)
{
    lrn_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->size = sb_attr_int_req(L, "size");
    s->alpha = sb_attr_float(L, "alpha", 1e-4f);
    s->beta = sb_attr_float(L, "beta", 0.75f);
    s->bias = sb_attr_float(L, "bias", 1.0f);
    if (L->status) return L->status;
    if (s->size < 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "size=%lld must be positive", (long long)s->size);
    return L->status;
}

static int lrn_infer(sb_infer_ctx *I)
{
    const lrn_state *s = I->state;
    const sb_tval *x = need_float(I, 0, "X");
    if (!x) return SB_ERR_TYPE;
    if (x->info.rank < 3) {
        char shape[256];
        sb_shape_text(&x->info, shape, sizeof shape);
        return sb_infer_fail(I, SB_ERR_VALUE, "X must be (N, C, ...), got %s", shape);
    }
    I->out[0] = x->info;
    int64_t total = sb_vinfo_numel(&x->info);
    if (total == 0) return SB_OK;
    /* the padded squares (N, C + size - 1, inner) and the sums (N, C, inner) */
    int64_t n = x->info.dims[0], c = x->info.dims[1], inner = total / (n * c);
    if (s->size > SB_MAX_ELEMENTS || c + s->size - 1 > SB_MAX_ELEMENTS / (n * inner))
        return sb_infer_fail(I, SB_ERR_VALUE, "size=%lld is too large", (long long)s->size);
    int64_t padded = n * (c + s->size - 1) * inner;
    I->workspace = (int64_t)(align64(padded * 4) + align64(total * 4));
    return SB_OK;
}

static int lrn_run(sb_run_ctx *R)
{
    const lrn_state *s = R->state;
    const sb_tval *x = R->in[0];
    int64_t total = sb_vinfo_numel(&x->info);
    if (total == 0) return SB_OK;
    int64_t n = x->info.dims[0], c = x->info.dims[1], inner = total / (n * c);
    int64_t size = s->size, before = (size - 1) / 2, cp = c + size - 1;
    uint8_t *ws = R->workspace;
    float *P = (float *)ws, *A = (float *)(ws + align64(n * cp * inner * 4));
    sb_tval xt = ftensor(&x->info, x->data), at = ftensor(&x->info, A);
    int status;
    uint32_t zero = 0;
    /* the squares, into the middle of zero channels (their +0 terms leave
     * each serial sum unchanged) */
    if ((status = sb_k_binary(R, SB_BIN_MUL, &xt, &xt, &at))) return kfail(R, status, "sb_binary");
    sb_k_fill(P, n * cp * inner, 4, &zero);
    int64_t shape[3] = {n, c, inner}, dense[3] = {c * inner, inner, 1}, pad[3] = {cp * inner, inner, 1};
    if ((status = sb_k_copy(R->threads, 3, shape, 4, A, dense, P + before * inner, pad)))
        return kfail(R, status, "copy");
    /* acc = +0, then + each window of `size` channels in turn */
    sb_k_fill(A, total, 4, &zero);
    for (int64_t k = 0; k < size; ++k)
        if ((status = bin_strided(R, SB_BIN_ADD, 3, shape, A, dense, P + k * inner, pad, A)))
            return kfail(R, status, "sb_binary");
    /* scale = float32(alpha) / size in binary64, rounded to float32 */
    float scale = (float)((double)s->alpha / (double)size);
    if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, &at, scale, &at)) ||
        (status = sb_k_binary_scalar(R, SB_BIN_ADD, &at, s->bias, &at)) ||
        (status = sb_k_binary_scalar(R, SB_BIN_POW, &at, -s->beta, &at)) ||
        (status = sb_k_binary(R, SB_BIN_MUL, &xt, &at, R->out[0])))
        return kfail(R, status, "sb_binary");
    return SB_OK;
}

const sb_op_def sb_op_LRN = {.name = "LRN", .load = lrn_load, .infer = lrn_infer, .run = lrn_run};
