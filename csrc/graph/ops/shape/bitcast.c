/* ONNX BitCast (opset 26; docs/onnx.md): the input's bytes as another type
 * of the same width, shape unchanged: a view, no run. Between the types
 * stored as their own bytes (float32 and the integers, and bool as a
 * source: its bytes are 0 or 1); float16 and bfloat16 values are held as
 * float32 (docs/onnx.md) and a bool must be 0 or 1, so those are refused.
 * The one operator whose float32 output may be a NaN other than
 * 0x7FC00000: the bits are its result. */
#include <stdio.h>
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

typedef struct { int64_t to; } bitcast_state;   /* .int_attrs */

static int own_bytes(int dtype)
{
    return dtype == SB_DT_FLOAT || (sb_dtype_is_int(dtype) && dtype != SB_DT_BOOL);
}

static int bitcast_infer(sb_infer_ctx *I)
{
    const bitcast_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    if (s->to == -1) return sb_infer_fail(I, SB_ERR_VALUE, "attribute 'to' is required");
    char a[32], b[32];
    int to = s->to >= 0 && s->to < 64 ? (int)s->to : -1;
    const char *to_name = to >= 0 ? dtype_text(to, b, sizeof b) : NULL;
    if (!to_name) snprintf(b, sizeof b, "%lld", (long long)s->to), to_name = b;
    if (to < 0 || !own_bytes(to) || !(own_bytes(x->info.dtype) || x->info.dtype == SB_DT_BOOL))
        return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "BitCast from %s to %s is not supported (between "
                             "float32 and the integer types, and from bool)",
                             dtype_text(x->info.dtype, a, sizeof a), to_name);
    if (sb_dtype_size(to) != sb_dtype_size(x->info.dtype))
        return sb_infer_fail(I, SB_ERR_VALUE, "BitCast from %s to %s: the widths differ",
                             dtype_text(x->info.dtype, a, sizeof a), to_name);
    I->out[0] = x->info;
    I->out[0].dtype = to;
    return SB_OK;
}

const sb_op_def sb_op_BitCast = {
    .name = "BitCast", .int_attrs = {{"to", -1}}, .infer = bitcast_infer, .flags = SB_OP_VIEW};
