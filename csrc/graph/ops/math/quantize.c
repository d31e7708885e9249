/* ONNX QuantizeLinear and DequantizeLinear (docs/onnx.md): scales float32;
 * int8, uint8, int16, uint16 (and int32 to dequantize); per tensor, per axis
 * or in blocks along the axis (block_size, opset 21). The compute is
 * kernels/quantize.c. */
#include <string.h>
#include "graph/kcall.h"
#include "graph/op.h"
#include "kernels/quantize.h"
#include "graph/ops/math/math_util.h"

typedef struct { int quantize; int64_t axis, block, output_dtype; } quant_state;

static int quant_load(sb_load_ctx *L)
{
    quant_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->quantize = !strcmp(L->node->op_type, "QuantizeLinear");
    s->axis = sb_attr_int(L, "axis", 1);
    s->block = sb_attr_int(L, "block_size", 0);
    s->output_dtype = sb_attr_int(L, "output_dtype", 0);
    sb_attr_ignore(L, "saturate");   /* for float8 outputs only, which are refused */
    if (sb_has_attr(L, "precision")) {
        int64_t p = sb_attr_int(L, "precision", 0);
        if (!L->status && p != 0 && p != SB_DT_FLOAT)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "precision %lld is not supported (float32 is)",
                                (long long)p);
    }
    if (L->status) return L->status;
    if (s->block < 0)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "block_size %lld must not be negative",
                            (long long)s->block);
    if (!s->quantize && s->output_dtype && s->output_dtype != SB_DT_FLOAT)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "output_dtype %lld is not supported (float32 is)",
                            (long long)s->output_dtype);
    return L->status;
}

static int kind_of(int dtype, int with_int32)
{
    switch (dtype) {
    case SB_DT_INT8: return SB_Q_INT8;
    case SB_DT_UINT8: return SB_Q_UINT8;
    case SB_DT_INT16: return SB_Q_INT16;
    case SB_DT_UINT16: return SB_Q_UINT16;
    case SB_DT_INT32: return with_int32 ? SB_Q_INT32 : -1;
    default: return -1;
    }
}

/* The view of x and of its scale (checked against x), and the integer type. */
static int quant_view(sb_infer_ctx *I, const sb_vinfo *x, const sb_vinfo *scale, const sb_vinfo *zp,
                      int dtype, sb_quant_view *v)
{
    const quant_state *s = I->state;
    char xs[256], ss[256];
    sb_shape_text(x, xs, sizeof xs);
    sb_shape_text(scale, ss, sizeof ss);
    memset(v, 0, sizeof *v);
    v->kind = kind_of(dtype, !s->quantize);
    if (v->kind < 0)
        return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "%s is not supported (int8, uint8, int16, "
                             "uint16%s are)", sb_dtype_name(dtype), s->quantize ? "" : ", int32");
    if (zp && !sb_vinfo_same_shape(zp, scale)) {
        char zs[256];
        sb_shape_text(zp, zs, sizeof zs);
        return sb_infer_fail(I, SB_ERR_VALUE, "the zero point %s and the scale %s differ in shape", zs,
                             ss);
    }
    int64_t n = sb_vinfo_numel(scale);
    int a = 0;
    if (n != 1 || scale->rank > 1 || s->block) {
        int status = sb_infer_axis(I, s->axis, x->rank, "axis", &a);
        if (status) return status;
    }
    v->outer = 1, v->axis = x->rank ? x->dims[a] : 1, v->inner = 1;
    for (int d = 0; d < a; ++d) v->outer *= x->dims[d];
    for (int d = a + 1; d < x->rank; ++d) v->inner *= x->dims[d];
    v->so = v->sa = v->si = 1, v->block = v->axis ? v->axis : 1;
    if (s->block) {   /* the scale: x's shape with ceil(dims[axis] / block) there */
        int fits = scale->rank == x->rank;
        for (int d = 0; fits && d < x->rank; ++d)
            fits = scale->dims[d] == (d == a ? (x->dims[d] + s->block - 1) / s->block : x->dims[d]);
        if (!fits)
            return sb_infer_fail(I, SB_ERR_VALUE, "scale %s does not fit x %s in blocks of %lld along "
                                 "axis %d", ss, xs, (long long)s->block, a);
        v->so = v->outer, v->sa = scale->dims[a], v->si = v->inner, v->block = s->block;
    } else if (n != 1 || scale->rank > 1) {
        if (scale->rank != 1 || scale->dims[0] != v->axis)
            return sb_infer_fail(I, SB_ERR_VALUE, "scale %s is neither one value nor one per element "
                                 "of axis %d of x %s", ss, a, xs);
        v->sa = v->axis, v->block = 1;
    }
    return SB_OK;
}

static int quant_infer(sb_infer_ctx *I)
{
    const quant_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "x");
    if (!x) return SB_ERR_VALUE;
    const sb_tval *scale = sb_infer_float(I, 1, s->quantize ? "y_scale" : "x_scale");
    if (!scale) return SB_ERR_TYPE;
    const sb_tval *zp = I->n_in > 2 ? I->in[2] : NULL;
    int dtype;
    if (s->quantize) {
        if (!sb_infer_float(I, 0, "x")) return SB_ERR_TYPE;
        dtype = zp ? zp->info.dtype : s->output_dtype ? (int)s->output_dtype : SB_DT_UINT8;
        if (zp && s->output_dtype && s->output_dtype != zp->info.dtype)
            return sb_infer_fail(I, SB_ERR_TYPE, "output_dtype %lld and the zero point's %s differ",
                                 (long long)s->output_dtype, sb_dtype_name(zp->info.dtype));
    } else {
        dtype = x->info.dtype;
        if (zp && zp->info.dtype != dtype)
            return sb_infer_fail(I, SB_ERR_TYPE, "x is %s and its zero point %s", sb_dtype_name(dtype),
                                 sb_dtype_name(zp->info.dtype));
    }
    sb_quant_view v;
    int status = quant_view(I, &x->info, &scale->info, zp ? &zp->info : NULL, dtype, &v);
    if (status) return status;
    if (!s->quantize && v.kind == SB_Q_INT32 && zp && zp->data) {
        for (int64_t i = 0; i < sb_vinfo_numel(&zp->info); ++i)
            if (sb_int_at(zp, i))
                return sb_infer_fail(I, SB_ERR_VALUE, "an int32 x's zero point must be 0");
    }
    I->out[0] = x->info;
    I->out[0].dtype = s->quantize ? dtype : SB_DT_FLOAT;
    return SB_OK;
}

static int quant_run(sb_run_ctx *R)
{
    const quant_state *s = R->state;
    const sb_tval *x = R->in[0], *scale = R->in[1], *zp = R->n_in > 2 ? R->in[2] : NULL;
    sb_infer_ctx I;
    sb_vinfo outs[1];
    sb_infer_from_run(R, &I, outs);
    sb_quant_view v;
    int status = quant_view(&I, &x->info, &scale->info, zp ? &zp->info : NULL,
                            s->quantize ? R->out[0]->info.dtype : x->info.dtype, &v);
    if (status) return status;
    v.scale = scale->data, v.zero_point = zp ? zp->data : NULL;
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    if (s->quantize) sb_quantize(&v, x->data, R->out[0]->data);
    else sb_dequantize(&v, x->data, R->out[0]->data);
    return SB_OK;
}

const sb_op_def sb_op_QuantizeLinear = {
    .name = "QuantizeLinear", .load = quant_load, .infer = quant_infer, .run = quant_run};
const sb_op_def sb_op_DequantizeLinear = {
    .name = "DequantizeLinear", .load = quant_load, .infer = quant_infer, .run = quant_run};
