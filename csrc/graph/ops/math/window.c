/* ONNX HannWindow, HammingWindow and BlackmanWindow (opset 17; docs/onnx.md),
 * as their function bodies compute them in float32: N = size (periodic) or
 * size - 1 (symmetric); a = 2pi / N with 2pi the float32 6.2831855;
 * y[n] = (A0 - A1 * cos(n * a)) + A2 * cos((n * a) * 2), each operation
 * rounded, cos the exact one (math/trig.h), in both modes. A0, A1, A2: Hann
 * 0.5, 0.5, 0; Hamming the float32 values of 25/46, 21/46, 0; Blackman 0.42,
 * 0.5, 0.08. */
#include <string.h>
#include "graph/op.h"
#include "math/arith.h"
#include "math/trig.h"

typedef struct { int64_t periodic, output_datatype; } window_state;   /* .int_attrs */

static int window_size(sb_infer_ctx *I, int64_t *size)
{
    const sb_tval *s = sb_infer_int(I, 0, "size");
    if (!s) return SB_ERR_TYPE;
    if (sb_vinfo_numel(&s->info) != 1) return sb_infer_fail(I, SB_ERR_VALUE, "size must be a scalar");
    if (!s->data) return SB_NEEDS_VALUES;
    *size = sb_int_at(s, 0);
    if (*size < 0 || *size > ((int64_t)1 << 31))
        return sb_infer_fail(I, SB_ERR_VALUE, "size %lld must be in [0, 2**31]", (long long)*size);
    return SB_OK;
}

static int window_infer(sb_infer_ctx *I)
{
    const window_state *s = I->state;
    if (s->output_datatype != SB_DT_FLOAT)
        return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "output_datatype %lld is not supported (1, float32, "
                             "is)", (long long)s->output_datatype);
    int64_t size = 0;
    int status = window_size(I, &size);
    if (status) return status;
    I->out[0] = (sb_vinfo){.dtype = SB_DT_FLOAT, .rank = 1, .dims = {size}};
    return SB_OK;
}

static int window_run(sb_run_ctx *R)
{
    const window_state *s = R->state;
    sb_infer_ctx I;
    sb_vinfo outs[1];
    sb_infer_from_run(R, &I, outs);
    int64_t size = 0;
    int status = window_size(&I, &size);
    if (status) return status;
    const char *op = R->node->op_type;
    float a0 = 0.5f, a1 = 0.5f, a2 = 0.0f;
    if (!strcmp(op, "HammingWindow")) a0 = 25.0f / 46.0f, a1 = 21.0f / 46.0f;
    if (!strcmp(op, "BlackmanWindow")) a0 = 0.42f, a1 = 0.5f, a2 = 0.08f;
    float n_fp = (float)size, p = s->periodic ? 1.0f : 0.0f;
    float size_fp = n_fp * p + (n_fp - 1.0f) * (1.0f - p);
    float step = 6.2831854820251465f / size_fp;
    float *y = R->out[0]->data;
    for (int64_t n = 0; n < size; ++n) {
        float angle = (float)n * step;
        float c1 = sb_exact_cos(angle), c2 = sb_exact_cos(angle * 2.0f);
        y[n] = sbt_canonical((a0 - a1 * c1) + a2 * c2);
    }
    return SB_OK;
}

#define WINDOW_OP(NAME)                                                                        \
    const sb_op_def sb_op_##NAME = {.name = #NAME, .int_attrs = {{"periodic", 1}, {"output_datatype", 1}}, \
                                    .infer = window_infer, .run = window_run};
WINDOW_OP(HannWindow)
WINDOW_OP(HammingWindow)
WINDOW_OP(BlackmanWindow)
