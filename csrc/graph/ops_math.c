/* ONNX operators: elementwise arithmetic and functions. float32 tensors go
 * through samebits' kernels (docs/exact-ops.md); integer tensors are
 * computed here exactly, wrapping like their type, as C computes them. */
#include <string.h>
#include "arith.h"
#include "kcall.h"
#include "op.h"
#include "unary.h"

/* ---- integer arithmetic ------------------------------------------------------- */

enum { IOP_ADD, IOP_SUB, IOP_MUL, IOP_DIV, IOP_POW, IOP_MAX, IOP_MIN };

/* One integer operation in 64-bit two's complement (the caller wraps to the
 * type); signedness decides division, comparisons and powers. 0 on a
 * division by zero. */
static int int_op(int op, int is_signed, int64_t a, int64_t b, int64_t *out)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case IOP_ADD: *out = (int64_t)(ua + ub); return 1;
    case IOP_SUB: *out = (int64_t)(ua - ub); return 1;
    case IOP_MUL: *out = (int64_t)(ua * ub); return 1;
    case IOP_DIV:
        if (b == 0) return 0;
        if (!is_signed) { *out = (int64_t)(ua / ub); return 1; }
        if (a == INT64_MIN && b == -1) { *out = INT64_MIN; return 1; }   /* wraps */
        *out = a / b;   /* C truncates toward zero, as ONNX's integer Div */
        return 1;
    case IOP_POW: {
        if (is_signed && b < 0) {
            *out = a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
            return 1;
        }
        uint64_t r = 1, p = ua, e = ub;
        while (e) {
            if (e & 1) r *= p;
            p *= p;
            e >>= 1;
        }
        *out = (int64_t)r;
        return 1;
    }
    case IOP_MAX: *out = is_signed ? (a > b ? a : b) : (ua > ub ? a : b); return 1;
    case IOP_MIN: *out = is_signed ? (a < b ? a : b) : (ua < ub ? a : b); return 1;
    }
    return 0;
}

/* y = op(a, b) over integer tensors with broadcasting; y has a's type. */
static int int_binary(sb_run_ctx *R, int op, const sb_tval *a, const sb_tval *b, sb_tval *y)
{
    int64_t n = sb_vinfo_numel(&y->info);
    int64_t sa[SB_MAX_RANK], sbs[SB_MAX_RANK], idx[SB_MAX_RANK] = {0};
    sb_broadcast_strides(&a->info, &y->info, sa);
    sb_broadcast_strides(&b->info, &y->info, sbs);
    int rank = y->info.rank, is_signed = sb_dtype_is_signed(a->info.dtype);
    int64_t oa = 0, ob = 0;
    for (int64_t i = 0; i < n; ++i) {
        int64_t r;
        if (!int_op(op, is_signed, sb_int_at(a, oa), sb_int_at(b, ob), &r))
            return sb_run_fail(R, SB_ERR_VALUE, "integer division by zero");
        sb_int_store(y->data, y->info.dtype, i, r);
        for (int d = rank - 1; d >= 0; --d) {
            oa += sa[d], ob += sbs[d];
            if (++idx[d] < y->info.dims[d]) break;
            oa -= sa[d] * y->info.dims[d], ob -= sbs[d] * y->info.dims[d];
            idx[d] = 0;
        }
    }
    return SB_OK;
}

/* ---- Add, Sub, Mul, Div, Pow ------------------------------------------------------ */

typedef struct { int bin, iop; } binary_state;

static const struct { const char *name; int bin, iop; } BINARY[] = {
    {"Add", SB_BIN_ADD, IOP_ADD}, {"Sub", SB_BIN_SUB, IOP_SUB}, {"Mul", SB_BIN_MUL, IOP_MUL},
    {"Div", SB_BIN_DIV, IOP_DIV}, {"Pow", SB_BIN_POW, IOP_POW}, {"Max", SB_BIN_MAXIMUM, IOP_MAX},
    {"Min", SB_BIN_MINIMUM, IOP_MIN}, {"Sum", SB_BIN_ADD, IOP_ADD}, {"Mean", SB_BIN_ADD, IOP_ADD},
};

static int binary_load(sb_load_ctx *L)
{
    binary_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    for (size_t k = 0; k < sizeof BINARY / sizeof BINARY[0]; ++k)
        if (!strcmp(BINARY[k].name, L->node->op_type)) s->bin = BINARY[k].bin, s->iop = BINARY[k].iop;
    if (L->opset < 7) {
        sb_attr_ignore(L, "broadcast");
        sb_attr_ignore(L, "axis");
    }
    return L->status;
}

/* The pair's result type: float32 with float32 (Pow: any exponent), or two
 * integer tensors (not bool, but for Pow). */
static int binary_types(sb_infer_ctx *I, int bin, const sb_tval *a, const sb_tval *b, int *out)
{
    int fa = a->info.dtype == SB_DT_FLOAT, fb = b->info.dtype == SB_DT_FLOAT;
    if (fa && (fb || bin == SB_BIN_POW)) { *out = SB_DT_FLOAT; return SB_OK; }
    if (!fa && !fb && (bin == SB_BIN_POW || a->info.dtype != SB_DT_BOOL)) {
        *out = a->info.dtype;
        return SB_OK;
    }
    return sb_infer_fail(I, SB_ERR_TYPE, "inputs of types %s and %s cannot be combined",
                         sb_dtype_name(a->info.dtype), sb_dtype_name(b->info.dtype));
}

static int binary_infer(sb_infer_ctx *I)
{
    const binary_state *s = I->state;
    if (I->n_in < 1) return sb_infer_fail(I, SB_ERR_VALUE, "needs at least one input");
    const sb_vinfo *shapes[64];
    if (I->n_in > 64) return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "more than 64 inputs");
    int dtype = 0;
    for (int i = 0; i < I->n_in; ++i) {
        const sb_tval *t = sb_infer_input(I, i, "operand");
        if (!t) return SB_ERR_VALUE;
        shapes[i] = &t->info;
        if (i == 0) dtype = t->info.dtype;
        else {
            sb_tval acc = {.info = {.dtype = dtype}};
            int status = binary_types(I, s->bin, &acc, t, &dtype);
            if (status) return status;
        }
    }
    if (I->n_in == 1 && !strcmp(I->node->op_type, "Mean") && dtype != SB_DT_FLOAT)
        return sb_infer_fail(I, SB_ERR_TYPE, "input data_0 must be float32");
    if (sb_broadcast(shapes, I->n_in, &I->out[0])) {
        char text[512];
        sb_broadcast_error_text(shapes, I->n_in, text, sizeof text);
        return sb_infer_fail(I, SB_ERR_VALUE, "%s", text);
    }
    I->out[0].dtype = dtype;
    if (!strcmp(I->node->op_type, "Mean") && dtype != SB_DT_FLOAT)
        return sb_infer_fail(I, SB_ERR_TYPE, "input data_0 must be float32");
    /* a left fold over several inputs keeps its partial results apart */
    if (I->n_in > 2) I->workspace = 2 * sb_vinfo_bytes(&I->out[0]);
    for (int i = 0; i < I->n_in && I->n_in <= 2; ++i)
        if (sb_vinfo_same_shape(shapes[i], &I->out[0]) && shapes[i]->dtype == dtype) I->inplace = i;
    return SB_OK;
}

static int binary_pair(sb_run_ctx *R, int bin, int iop, const sb_tval *a, const sb_tval *b, sb_tval *y)
{
    if (y->info.dtype == SB_DT_FLOAT) {
        sb_tval bf = *b;
        float *converted = NULL;
        if (b->info.dtype != SB_DT_FLOAT) {   /* Pow's integer exponent, as float32 */
            return sb_run_fail(R, SB_ERR_UNSUPPORTED, "Pow with an integer exponent tensor is not "
                               "supported yet");
        }
        (void)converted;
        return sb_k_binary(R, bin, a, &bf, y);
    }
    return int_binary(R, iop, a, b, y);
}

static int binary_run(sb_run_ctx *R)
{
    const binary_state *s = R->state;
    sb_tval *y = R->out[0];
    if (R->n_in == 1) {
        int64_t bytes = sb_vinfo_bytes(&y->info);
        if (bytes > 0 && y->data != R->in[0]->data) memcpy(y->data, R->in[0]->data, (size_t)bytes);
    } else if (R->n_in == 2) {
        int status = binary_pair(R, s->bin, s->iop, R->in[0], R->in[1], y);
        if (status) return status;
    } else {
        /* left to right: acc = in0; acc = op(acc, in_k), partial results in
         * the workspace's two halves, the last one into y */
        int64_t half = sb_vinfo_bytes(&y->info);
        uint8_t *ws = R->workspace;
        sb_tval acc = *R->in[0];
        for (int k = 1; k < R->n_in; ++k) {
            sb_tval next;
            next.info.dtype = y->info.dtype;
            const sb_vinfo *pair[2] = {&acc.info, &R->in[k]->info};
            sb_broadcast(pair, 2, &next.info);
            next.info.dtype = y->info.dtype;
            next.data = k == R->n_in - 1 ? y->data : ws + (k % 2) * half;
            int status = binary_pair(R, s->bin, s->iop, &acc, R->in[k], &next);
            if (status) return status;
            acc = next;
        }
    }
    if (!strcmp(R->node->op_type, "Mean"))
        return sb_k_binary_scalar(R, SB_BIN_DIV, y, (float)R->n_in, y);
    return SB_OK;
}

/* ---- functions of one float32 input --------------------------------------------- */

static const struct { const char *name; int op; } UNARY[] = {
    {"Relu", SB_OP_RELU}, {"Sigmoid", SB_OP_SIGMOID}, {"Tanh", SB_OP_TANH}, {"Erf", SB_OP_ERF},
    {"Exp", SB_OP_EXP}, {"Log", SB_OP_LOG}, {"Sqrt", SB_OP_SQRT}, {"Sin", SB_OP_SIN},
    {"Cos", SB_OP_COS}, {"Softplus", SB_OP_SOFTPLUS}, {"Mish", SB_OP_MISH},
};

typedef struct { int op; } unary_state;

static int unary_load(sb_load_ctx *L)
{
    unary_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    for (size_t k = 0; k < sizeof UNARY / sizeof UNARY[0]; ++k)
        if (!strcmp(UNARY[k].name, L->node->op_type)) s->op = UNARY[k].op;
    return L->status;
}

static int unary_infer(sb_infer_ctx *I)
{
    const unary_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "X");
    if (!x) return SB_ERR_VALUE;
    if (x->info.dtype != SB_DT_FLOAT && !(s->op == SB_OP_RELU && sb_dtype_is_int(x->info.dtype)))
        return sb_infer_fail(I, SB_ERR_TYPE, "input must be float32");
    I->out[0] = x->info;
    I->inplace = 0;
    return SB_OK;
}

static int unary_run(sb_run_ctx *R)
{
    const unary_state *s = R->state;
    const sb_tval *x = R->in[0];
    if (x->info.dtype != SB_DT_FLOAT) {   /* Relu on integers */
        int64_t n = sb_vinfo_numel(&x->info);
        for (int64_t i = 0; i < n; ++i) {
            int64_t v = sb_int_at(x, i);
            sb_int_store(R->out[0]->data, x->info.dtype, i,
                         sb_dtype_is_signed(x->info.dtype) && v < 0 ? 0 : v);
        }
        return SB_OK;
    }
    return sb_k_unary(R, s->op, 0.0f, x, R->out[0]);
}

const sb_op_def sb_ops_math[] = {
    {"Add", binary_load, binary_infer, binary_run, 0},
    {"Sub", binary_load, binary_infer, binary_run, 0},
    {"Mul", binary_load, binary_infer, binary_run, 0},
    {"Div", binary_load, binary_infer, binary_run, 0},
    {"Pow", binary_load, binary_infer, binary_run, 0},
    {"Max", binary_load, binary_infer, binary_run, 0},
    {"Min", binary_load, binary_infer, binary_run, 0},
    {"Sum", binary_load, binary_infer, binary_run, 0},
    {"Mean", binary_load, binary_infer, binary_run, 0},
    {"Relu", unary_load, unary_infer, unary_run, 0},
    {"Sigmoid", unary_load, unary_infer, unary_run, 0},
    {"Tanh", unary_load, unary_infer, unary_run, 0},
    {"Erf", unary_load, unary_infer, unary_run, 0},
    {"Exp", unary_load, unary_infer, unary_run, 0},
    {"Log", unary_load, unary_infer, unary_run, 0},
    {"Sqrt", unary_load, unary_infer, unary_run, 0},
    {"Sin", unary_load, unary_infer, unary_run, 0},
    {"Cos", unary_load, unary_infer, unary_run, 0},
    {"Softplus", unary_load, unary_infer, unary_run, 0},
    {"Mish", unary_load, unary_infer, unary_run, 0},
    {0},
};
