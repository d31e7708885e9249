/* The rounding the loader puts after a node whose output is float16 or
 * bfloat16 (graph/narrow.h): each float32 element rounded to the narrow type
 * (math/narrow_float.h), in place; integer and bool elements pass through.
 * Not an ONNX operator: never looked up by name. */
#include <string.h>
#include "graph/op.h"
#include "math/narrow_float.h"

static int round_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    I->out[0] = x->info;
    I->inplace = 0;
    return SB_OK;
}

static int round_run(sb_run_ctx *R, int bf)
{
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    int64_t n = sb_vinfo_numel(&x->info);
    if (x->info.dtype != SB_DT_FLOAT) {
        int64_t bytes = sb_vinfo_bytes(&x->info);
        if (bytes > 0 && y->data != x->data) memcpy(y->data, x->data, (size_t)bytes);
        return SB_OK;
    }
    const float *in = x->data;
    float *out = y->data;
    if (bf)
        for (int64_t i = 0; i < n; ++i) out[i] = sb_round_to_bfloat16(in[i]);
    else
        for (int64_t i = 0; i < n; ++i) out[i] = sb_round_to_float16(in[i]);
    return SB_OK;
}

static int run_float16(sb_run_ctx *R) { return round_run(R, 0); }
static int run_bfloat16(sb_run_ctx *R) { return round_run(R, 1); }

const sb_op_def sb_op_round_float16 = {.name = "SbRoundFloat16", .infer = round_infer, .run = run_float16};
const sb_op_def sb_op_round_bfloat16 = {.name = "SbRoundBFloat16", .infer = round_infer, .run = run_bfloat16};
