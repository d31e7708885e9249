/* ONNX operators: elementwise arithmetic and functions. float32 tensors go
 * through samebits' kernels (docs/exact-ops.md); integer tensors are
 * computed here exactly, wrapping like their type, as C computes them. */
#include <string.h>
#include "math/arith.h"
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "isa/unary.h"

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
    /* Pow's integer exponent converted to float32 */
    if (I->n_in == 2 && dtype == SB_DT_FLOAT && I->in[1]->info.dtype != SB_DT_FLOAT)
        I->workspace = 4 * sb_vinfo_numel(&I->in[1]->info);
    for (int i = 0; i < I->n_in && I->n_in <= 2; ++i)
        if (sb_vinfo_same_shape(shapes[i], &I->out[0]) && shapes[i]->dtype == dtype) I->inplace = i;
    return SB_OK;
}

static int binary_pair(sb_run_ctx *R, int bin, int iop, const sb_tval *a, const sb_tval *b, sb_tval *y)
{
    if (y->info.dtype == SB_DT_FLOAT) {
        sb_tval bf = *b;
        if (b->info.dtype != SB_DT_FLOAT) {
            /* Pow's integer exponent, as float32: the nearest float32 of each
             * value (ties to even), one rounding, as Python's cast does */
            float *converted = R->workspace;
            int64_t n = sb_vinfo_numel(&b->info);
            int is_signed = sb_dtype_is_signed(b->info.dtype);
            for (int64_t i = 0; i < n; ++i)
                converted[i] = is_signed ? (float)sb_int_at(b, i) : (float)sb_int_at_u(b, i);
            bf.info.dtype = SB_DT_FLOAT;
            bf.data = converted;
        }
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

/* ---- helpers ------------------------------------------------------------------- */

#define CANONICAL_NAN 0x7FC00000u
#define FLT_MAX_F 3.40282346638528859811704183484516925e+38f

/* A 0-d float32 tensor over one value (a kernel's scalar operand). */
static sb_tval scalar_tval(float *v)
{
    sb_tval t;
    memset(&t, 0, sizeof t);
    t.info.dtype = SB_DT_FLOAT;
    t.data = v;
    return t;
}

/* The broadcast of n shapes into out (dtype untouched), or the error naming them. */
static int broadcast_or_fail(sb_infer_ctx *I, const sb_vinfo *const *shapes, int n, sb_vinfo *out)
{
    if (!sb_broadcast(shapes, n, out)) return SB_OK;
    char text[512];
    sb_broadcast_error_text(shapes, n, text, sizeof text);
    return sb_infer_fail(I, SB_ERR_VALUE, "%s", text);
}

/* A walk over a broadcast output in C order with the element offsets of up
 * to three operands (0 strides where they repeat). */
typedef struct {
    int rank, count;
    int64_t dims[SB_MAX_RANK], st[3][SB_MAX_RANK], idx[SB_MAX_RANK], off[3];
} bwalk;

static void bwalk_init(bwalk *w, const sb_vinfo *out, const sb_tval *const *ops, int count)
{
    memset(w, 0, sizeof *w);
    w->rank = out->rank, w->count = count;
    memcpy(w->dims, out->dims, sizeof w->dims);
    for (int o = 0; o < count; ++o) sb_broadcast_strides(&ops[o]->info, out, w->st[o]);
}

static void bwalk_next(bwalk *w)
{
    for (int d = w->rank - 1; d >= 0; --d) {
        for (int o = 0; o < w->count; ++o) w->off[o] += w->st[o][d];
        if (++w->idx[d] < w->dims[d]) return;
        for (int o = 0; o < w->count; ++o) w->off[o] -= w->st[o][d] * w->dims[d];
        w->idx[d] = 0;
    }
}

static float float_at(const sb_tval *t, int64_t i)
{
    float f;
    memcpy(&f, (const uint8_t *)t->data + 4 * i, 4);
    return f;
}

/* Two integer values (64-bit patterns of their types; `sa`/`sb`: the type is
 * signed) compared as the mathematical integers they are: -1, 0 or 1. */
static int int_cmp(int64_t a, int sa, int64_t b, int sb)
{
    int na = sa && a < 0, nb = sb && b < 0;
    if (na != nb) return na ? -1 : 1;
    if (na) return a < b ? -1 : a > b;
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    return ua < ub ? -1 : ua > ub;
}

/* float32 y = op(a, b) on a 0-d scalar a (b a tensor). */
static int k_scalar_binary(const sb_run_ctx *R, int op, float a, const sb_tval *b, sb_tval *y)
{
    sb_tval t = scalar_tval(&a);
    return sb_k_binary(R, op, &t, b, y);
}

/* |x| as maximum(x, x * -1): the sign bit cleared, NaN canonical. y must not be x. */
static int k_float_abs(const sb_run_ctx *R, const sb_tval *x, sb_tval *y)
{
    int status = sb_k_binary_scalar(R, SB_BIN_MUL, x, -1.0f, y);
    if (status) return status;
    return sb_k_binary(R, SB_BIN_MAXIMUM, x, y, y);
}

/* floor / ceil / round-half-even of a float32 by its bits (exact, free of the
 * floating-point environment): integers, infinities and zeros unchanged, a
 * zero result keeping the input's sign, NaN canonical. */
enum { RND_FLOOR, RND_CEIL, RND_ROUND };

static uint32_t round_bits(int kind, uint32_t u)
{
    uint32_t sign = u & 0x80000000u, mag = u & 0x7FFFFFFFu;
    if (mag > 0x7F800000u) return CANONICAL_NAN;
    if (mag == 0) return u;
    int e = (int)(mag >> 23);
    if (e >= 150) return u;                 /* |x| >= 2^23 (or inf): already an integer */
    if (e < 127) {                          /* 0 < |x| < 1 */
        int up;
        if (kind == RND_FLOOR) up = sign != 0;
        else if (kind == RND_CEIL) up = sign == 0;
        else up = e == 126 && (mag & 0x7FFFFFu);   /* above one half */
        return sign | (up ? 0x3F800000u : 0u);
    }
    int f = 150 - e;                        /* fractional bits: 1 to 23 */
    uint32_t unit = 1u << f, mask = unit - 1, frac = mag & mask, trunc = mag & ~mask;
    if (!frac) return u;
    int up;
    if (kind == RND_FLOOR) up = sign != 0;
    else if (kind == RND_CEIL) up = sign == 0;
    else {
        uint32_t half = unit >> 1;
        up = frac > half || (frac == half && ((mag >> f) & 1u));
    }
    return sign | (up ? trunc + unit : trunc);   /* a carry moves into the exponent */
}

/* ---- functions of one input (Neg, Abs, Floor, activations, ...) ------------------ */

enum {
    FN_NEG, FN_RECIPROCAL, FN_ABS, FN_FLOOR, FN_CEIL, FN_ROUND, FN_LEAKY_RELU, FN_HARD_SIGMOID,
    FN_ELU, FN_SELU, FN_SOFTSIGN, FN_HARD_SWISH, FN_GELU,
};

static const struct { const char *name; int kind; } FNS[] = {
    {"Neg", FN_NEG}, {"Reciprocal", FN_RECIPROCAL}, {"Abs", FN_ABS}, {"Floor", FN_FLOOR},
    {"Ceil", FN_CEIL}, {"Round", FN_ROUND}, {"LeakyRelu", FN_LEAKY_RELU},
    {"HardSigmoid", FN_HARD_SIGMOID}, {"Elu", FN_ELU}, {"Selu", FN_SELU},
    {"Softsign", FN_SOFTSIGN}, {"HardSwish", FN_HARD_SWISH}, {"Gelu", FN_GELU},
};

typedef struct { int kind, gelu_op; float alpha, beta, gamma; } fn_state;

static int fn_load(sb_load_ctx *L)
{
    fn_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    for (size_t k = 0; k < sizeof FNS / sizeof FNS[0]; ++k)
        if (!strcmp(FNS[k].name, L->node->op_type)) s->kind = FNS[k].kind;
    switch (s->kind) {
    case FN_LEAKY_RELU: s->alpha = sb_attr_float(L, "alpha", 0.01f); break;
    case FN_ELU: s->alpha = sb_attr_float(L, "alpha", 1.0f); break;
    case FN_SELU:
        s->alpha = sb_attr_float(L, "alpha", 1.67326319217681884765625f);
        s->gamma = sb_attr_float(L, "gamma", 1.05070102214813232421875f);
        break;
    case FN_HARD_SIGMOID:
        s->alpha = sb_attr_float(L, "alpha", 0.2f);
        s->beta = sb_attr_float(L, "beta", 0.5f);
        break;
    case FN_GELU: {
        const char *a = sb_attr_str(L, "approximate", "none");
        if (L->status) return L->status;
        if (!strcmp(a, "none")) s->gelu_op = SB_OP_GELU;
        else if (!strcmp(a, "tanh")) s->gelu_op = SB_OP_GELU_TANH;
        else return sb_load_fail(L, SB_ERR_UNSUPPORTED, "approximate='%s' is not supported", a);
        break;
    }
    default: break;
    }
    return L->status;
}

static int fn_infer(sb_infer_ctx *I)
{
    const fn_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "X");
    if (!x) return SB_ERR_VALUE;
    int64_t n = sb_vinfo_numel(&x->info);
    int is_float = x->info.dtype == SB_DT_FLOAT;
    I->out[0] = x->info;
    switch (s->kind) {
    case FN_NEG: case FN_ABS:   /* integers too */
        I->inplace = s->kind == FN_ABS && is_float ? -1 : 0;
        return SB_OK;
    case FN_RECIPROCAL:
        if (!is_float) return sb_infer_fail(I, SB_ERR_TYPE, "input must be float32");
        I->inplace = 0;
        return SB_OK;
    case FN_LEAKY_RELU: case FN_ELU:
        /* (an empty tensor of any type is passed through) */
        if (n == 0) return SB_OK;
        if (!sb_infer_float(I, 0, "X")) return SB_ERR_TYPE;
        if (s->alpha != s->alpha)
            return sb_infer_fail(I, SB_ERR_VALUE, s->kind == FN_ELU ? "elu: alpha must not be NaN"
                                 : "leaky_relu: negative_slope must not be NaN");
        I->inplace = 0;
        return SB_OK;
    case FN_SELU:
        if (!sb_infer_float(I, 0, "X")) return SB_ERR_TYPE;
        if (n && s->alpha != s->alpha)
            return sb_infer_fail(I, SB_ERR_VALUE, "elu: alpha must not be NaN");
        I->inplace = 0;
        return SB_OK;
    case FN_SOFTSIGN:
        if (!sb_infer_float(I, 0, "X")) return SB_ERR_TYPE;
        return SB_OK;   /* y holds partial results while x is still read */
    default:
        if (!sb_infer_float(I, 0, "X")) return SB_ERR_TYPE;
        I->inplace = 0;
        return SB_OK;
    }
}

static int fn_run(sb_run_ctx *R)
{
    const fn_state *s = R->state;
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    int64_t n = sb_vinfo_numel(&x->info);
    if (n == 0) return SB_OK;
    if (x->info.dtype != SB_DT_FLOAT) {   /* Neg and Abs on integers, wrapping like the type */
        int is_signed = sb_dtype_is_signed(x->info.dtype);
        for (int64_t i = 0; i < n; ++i) {
            uint64_t v = (uint64_t)sb_int_at(x, i);
            if (s->kind == FN_NEG || (is_signed && (int64_t)v < 0)) v = (uint64_t)0 - v;
            sb_int_store(y->data, y->info.dtype, i, (int64_t)v);
        }
        return SB_OK;
    }
    int status;
    switch (s->kind) {
    case FN_NEG: return sb_k_binary_scalar(R, SB_BIN_MUL, x, -1.0f, y);
    case FN_RECIPROCAL: return k_scalar_binary(R, SB_BIN_DIV, 1.0f, x, y);
    case FN_ABS: return k_float_abs(R, x, y);
    case FN_FLOOR: case FN_CEIL: case FN_ROUND: {
        int kind = s->kind == FN_FLOOR ? RND_FLOOR : s->kind == FN_CEIL ? RND_CEIL : RND_ROUND;
        const uint32_t *xb = x->data;
        uint32_t *yb = y->data;
        for (int64_t i = 0; i < n; ++i) yb[i] = round_bits(kind, xb[i]);
        return SB_OK;
    }
    case FN_LEAKY_RELU: return sb_k_unary(R, SB_OP_LEAKY_RELU, s->alpha, x, y);
    case FN_ELU: return sb_k_unary(R, SB_OP_ELU, s->alpha, x, y);
    case FN_SELU:
        if ((status = sb_k_unary(R, SB_OP_ELU, s->alpha, x, y))) return status;
        return sb_k_binary_scalar(R, SB_BIN_MUL, y, s->gamma, y);
    case FN_SOFTSIGN:   /* x / (1 + |x|) */
        if ((status = k_float_abs(R, x, y))) return status;
        if ((status = sb_k_binary_scalar(R, SB_BIN_ADD, y, 1.0f, y))) return status;
        return sb_k_binary(R, SB_BIN_DIV, x, y, y);
    case FN_HARD_SIGMOID:
        if (s->beta == 0.5f) return sb_k_unary(R, SB_OP_HARDSIGMOID_ONNX, s->alpha, x, y);
        if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, x, s->alpha, y))) return status;
        if ((status = sb_k_binary_scalar(R, SB_BIN_ADD, y, s->beta, y))) return status;
        if ((status = sb_k_binary_scalar(R, SB_BIN_MAXIMUM, y, 0.0f, y))) return status;
        return sb_k_binary_scalar(R, SB_BIN_MINIMUM, y, 1.0f, y);
    case FN_HARD_SWISH: return sb_k_unary(R, SB_OP_HARDSWISH_ONNX, 0.0f, x, y);
    case FN_GELU: return sb_k_unary(R, s->gelu_op, 0.0f, x, y);
    }
    return SB_OK;
}

/* ---- Mod --------------------------------------------------------------------------- */

typedef struct { int64_t fmod; } mod_state;

static int mod_load(sb_load_ctx *L)
{
    mod_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->fmod = sb_attr_int(L, "fmod", 0);
    return L->status;
}

static int mod_infer(sb_infer_ctx *I)
{
    const sb_tval *a = sb_infer_int(I, 0, "A");
    if (!a) return SB_ERR_TYPE;
    const sb_tval *b = sb_infer_int(I, 1, "B");
    if (!b) return SB_ERR_TYPE;
    const sb_vinfo *shapes[2] = {&a->info, &b->info};
    int status = broadcast_or_fail(I, shapes, 2, &I->out[0]);
    if (status) return status;
    I->out[0].dtype = a->info.dtype;
    if (sb_vinfo_same_shape(&a->info, &I->out[0])) I->inplace = 0;
    return SB_OK;
}

/* The remainder of two integers (patterns of their types; sa / sb: signed),
 * exact: with fmod the sign of a (C's truncating %), else the sign of b
 * (Python's floor modulo). 0 for a zero divisor. */
static int int_mod(int64_t a, int sa, int64_t b, int sb, int fmod, uint64_t *out)
{
    int na = sa && a < 0, nb = sb && b < 0;
    uint64_t ma = na ? (uint64_t)0 - (uint64_t)a : (uint64_t)a;
    uint64_t mb = nb ? (uint64_t)0 - (uint64_t)b : (uint64_t)b;
    if (mb == 0) return 0;
    uint64_t r = ma % mb;
    if (fmod || r == 0 || na == nb) *out = na ? (uint64_t)0 - r : r;
    else *out = nb ? (uint64_t)0 - (mb - r) : mb - r;
    return 1;
}

static int mod_run(sb_run_ctx *R)
{
    const mod_state *s = R->state;
    const sb_tval *a = R->in[0], *b = R->in[1];
    sb_tval *y = R->out[0];
    int64_t n = sb_vinfo_numel(&y->info);
    int sa = sb_dtype_is_signed(a->info.dtype), sbs = sb_dtype_is_signed(b->info.dtype);
    const sb_tval *ops[2] = {a, b};
    bwalk w;
    bwalk_init(&w, &y->info, ops, 2);
    for (int64_t i = 0; i < n; ++i, bwalk_next(&w)) {
        uint64_t r;
        if (!int_mod(sb_int_at(a, w.off[0]), sa, sb_int_at(b, w.off[1]), sbs, s->fmod != 0, &r))
            return sb_run_fail(R, SB_ERR_VALUE, "modulo by zero");
        sb_int_store(y->data, y->info.dtype, i, (int64_t)r);
    }
    return SB_OK;
}

/* ---- Clip ---------------------------------------------------------------------------- */

typedef struct { int attrs, has_lo, has_hi; float lo, hi; } clip_state;

static int clip_load(sb_load_ctx *L)
{
    clip_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    if (L->opset < 11) {   /* bounds as attributes */
        s->attrs = 1;
        s->has_lo = sb_has_attr(L, "min");
        s->has_hi = sb_has_attr(L, "max");
        s->lo = sb_attr_float(L, "min", 0.0f);
        s->hi = sb_attr_float(L, "max", 0.0f);
    }
    return L->status;
}

static const sb_tval *clip_bound(const sb_infer_ctx *I, int i)
{
    const clip_state *s = I->state;
    return s->attrs || i >= I->n_in ? NULL : I->in[i];
}

static int clip_infer(sb_infer_ctx *I)
{
    const clip_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    const sb_tval *lo = clip_bound(I, 1), *hi = clip_bound(I, 2);
    I->out[0] = x->info;
    if (x->info.dtype != SB_DT_FLOAT) {
        static const char *const names[2] = {"min", "max"};
        for (int k = 0; k < 2; ++k) {
            if (s->attrs && (k ? s->has_hi : s->has_lo))
                return sb_infer_fail(I, SB_ERR_TYPE, "input %s must be an integer tensor, got "
                                     "float32", names[k]);
            if ((k ? hi : lo) && !sb_infer_int(I, k + 1, names[k])) return SB_ERR_TYPE;
        }
        I->inplace = 0;
        return SB_OK;
    }
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    if (lo && !sb_infer_float(I, 1, "min")) return SB_ERR_TYPE;
    if (hi && !sb_infer_float(I, 2, "max")) return SB_ERR_TYPE;
    /* maximum(x, min), then minimum(that, max), each broadcasting */
    for (int k = 0; k < 2; ++k) {
        const sb_tval *bound = k ? hi : lo;
        if (!bound) continue;
        sb_vinfo acc = I->out[0];
        const sb_vinfo *pair[2] = {&acc, &bound->info};
        if (sb_broadcast(pair, 2, &I->out[0])) {
            char sa[256], sbt[256];
            sb_shape_text(&acc, sa, sizeof sa);
            sb_shape_text(&bound->info, sbt, sizeof sbt);
            return sb_infer_fail(I, SB_ERR_VALUE, "%s: operands could not be broadcast together "
                                 "with shapes %s and %s", k ? "minimum" : "maximum", sa, sbt);
        }
        I->out[0].dtype = SB_DT_FLOAT;
    }
    if (sb_vinfo_same_shape(&x->info, &I->out[0])) I->inplace = 0;
    return SB_OK;
}

static int clip_run(sb_run_ctx *R)
{
    const clip_state *s = R->state;
    const sb_tval *x = R->in[0];
    const sb_tval *lo = s->attrs || R->n_in < 2 ? NULL : R->in[1];
    const sb_tval *hi = s->attrs || R->n_in < 3 ? NULL : R->in[2];
    sb_tval *y = R->out[0];
    int64_t n = sb_vinfo_numel(&x->info);
    if (x->info.dtype != SB_DT_FLOAT) {
        int64_t lo_v = 0, hi_v = 0;
        int sx = sb_dtype_is_signed(x->info.dtype), sl = 0, sh = 0;
        if (lo) {
            if (!sb_vinfo_numel(&lo->info)) return sb_run_fail(R, SB_ERR_INDEX, "input min is empty");
            lo_v = sb_int_at(lo, 0), sl = sb_dtype_is_signed(lo->info.dtype);
        }
        if (hi) {
            if (!sb_vinfo_numel(&hi->info)) return sb_run_fail(R, SB_ERR_INDEX, "input max is empty");
            hi_v = sb_int_at(hi, 0), sh = sb_dtype_is_signed(hi->info.dtype);
        }
        for (int64_t i = 0; i < n; ++i) {
            int64_t v = sb_int_at(x, i);
            int sv = sx;
            if (lo && int_cmp(v, sv, lo_v, sl) < 0) v = lo_v, sv = sl;
            if (hi && int_cmp(v, sv, hi_v, sh) > 0) v = hi_v;
            sb_int_store(y->data, y->info.dtype, i, v);
        }
        return SB_OK;
    }
    if (n == 0) return SB_OK;
    /* minimum(maximum(x, min), max); an absent bound is float32's lowest or
     * largest finite value (ONNX's default) */
    float lo_f = s->attrs && s->has_lo ? s->lo : -FLT_MAX_F;
    float hi_f = s->attrs && s->has_hi ? s->hi : FLT_MAX_F;
    sb_tval lo_t = lo ? *lo : scalar_tval(&lo_f), hi_t = hi ? *hi : scalar_tval(&hi_f);
    /* the maximum straight over the output's shape (where max broadcasts it
     * further, the same values repeated), then the minimum in place */
    int status = sb_k_binary(R, SB_BIN_MAXIMUM, x, &lo_t, y);
    if (status) return status;
    return sb_k_binary(R, SB_BIN_MINIMUM, y, &hi_t, y);
}

/* ---- PRelu ------------------------------------------------------------------------- */

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
    int status = broadcast_or_fail(I, shapes, 2, &shape);
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

/* ---- Where ------------------------------------------------------------------------- */

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
    int status = broadcast_or_fail(I, shapes, 3, &I->out[0]);
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

/* ---- comparisons and logic --------------------------------------------------------- */

enum { CMP_EQ, CMP_LT, CMP_GT, CMP_LE, CMP_GE, LOG_AND, LOG_OR, LOG_XOR, LOG_NOT };

static const struct { const char *name; int kind; } CMPS[] = {
    {"Equal", CMP_EQ}, {"Less", CMP_LT}, {"Greater", CMP_GT}, {"LessOrEqual", CMP_LE},
    {"GreaterOrEqual", CMP_GE}, {"And", LOG_AND}, {"Or", LOG_OR}, {"Xor", LOG_XOR},
    {"Not", LOG_NOT},
};

typedef struct { int kind; } cmp_state;

static int cmp_load(sb_load_ctx *L)
{
    cmp_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    for (size_t k = 0; k < sizeof CMPS / sizeof CMPS[0]; ++k)
        if (!strcmp(CMPS[k].name, L->node->op_type)) s->kind = CMPS[k].kind;
    return L->status;
}

static int cmp_infer(sb_infer_ctx *I)
{
    const cmp_state *s = I->state;
    const sb_tval *a, *b;
    if (s->kind == LOG_NOT) {
        if (!(a = sb_infer_int(I, 0, "X"))) return SB_ERR_TYPE;
        I->out[0] = a->info;
        I->out[0].dtype = SB_DT_BOOL;
        if (a->info.dtype == SB_DT_BOOL) I->inplace = 0;
        return SB_OK;
    }
    if (s->kind >= LOG_AND) {
        if (!(a = sb_infer_int(I, 0, "A")) || !(b = sb_infer_int(I, 1, "B"))) return SB_ERR_TYPE;
    } else {
        if (!(a = sb_infer_input(I, 0, "A")) || !(b = sb_infer_input(I, 1, "B"))) return SB_ERR_VALUE;
        if ((a->info.dtype == SB_DT_FLOAT) != (b->info.dtype == SB_DT_FLOAT))
            return sb_infer_fail(I, SB_ERR_TYPE, "inputs must have the same type");
    }
    const sb_vinfo *shapes[2] = {&a->info, &b->info};
    int status = broadcast_or_fail(I, shapes, 2, &I->out[0]);
    if (status) return status;
    I->out[0].dtype = SB_DT_BOOL;
    for (int i = 0; i < 2; ++i)
        if (shapes[i]->dtype == SB_DT_BOOL && sb_vinfo_same_shape(shapes[i], &I->out[0])) I->inplace = i;
    return SB_OK;
}

static int cmp_of(int kind, int c)
{
    switch (kind) {
    case CMP_EQ: return c == 0;
    case CMP_LT: return c < 0;
    case CMP_GT: return c > 0;
    case CMP_LE: return c <= 0;
    default: return c >= 0;
    }
}

/* The comparisons of two operands of one type (float32, int32, int64; the
 * common case) over the walk merged to as few dimensions as it needs, the
 * innermost one a typed, strided loop: the same results as the element
 * walk below, about fifty times faster. 0 when the types are others. The
 * inner strides that broadcasting gives (both operands contiguous, or one a
 * value repeated along the row: a one-hot encoding's Equal against a Range)
 * have loops of their own with constant strides, which the compiler
 * vectorises. */
/* LOOP(T, OP, XA, XB) with the row's strides as constants where broadcasting
 * makes them 1 and 1, 0 and 1, or 1 and 0. */
#define CMP_BY_STRIDES(LOOP, T, OP)                                                  \
    if (xa == 1 && xb == 1) { LOOP(T, OP, 1, 1) }                                    \
    else if (xa == 0 && xb == 1) { LOOP(T, OP, 0, 1) }                               \
    else if (xa == 1 && xb == 0) { LOOP(T, OP, 1, 0) }                               \
    else { LOOP(T, OP, xa, xb) }
#define CMP_STRIDED(T, OP, XA, XB)                                                   \
    for (int64_t j = 0; j < inner; ++j)                                              \
        out[j] = (uint8_t)(((const T *)pa)[j * (XA)] OP ((const T *)pb)[j * (XB)]);
#define CMP_LOOP(T, OP) CMP_BY_STRIDES(CMP_STRIDED, T, OP)
/* int64 equality as two 32-bit equalities (little-endian halves): the form
 * SSE2, which has no 64-bit compare, vectorises (about 3x the plain loop). */
#if defined(__GNUC__)
typedef uint32_t __attribute__((may_alias)) cmp_half;
#else
typedef uint32_t cmp_half;
#endif
#define CMP_EQ64_STRIDED(T, OP, XA, XB)                                              \
    for (int64_t j = 0; j < inner; ++j) {                                            \
        const cmp_half *ha = (const cmp_half *)pa + 2 * j * (XA);                    \
        const cmp_half *hb = (const cmp_half *)pb + 2 * j * (XB);                    \
        out[j] = (uint8_t)((ha[0] == hb[0]) & (ha[1] == hb[1]));                     \
    }
#define CMP_EQ64 CMP_BY_STRIDES(CMP_EQ64_STRIDED, int64_t, ==)
#define CMP_KINDS(T)                                                                 \
    switch (kind) {                                                                  \
    case CMP_EQ: CMP_LOOP(T, ==) break;                                              \
    case CMP_LT: CMP_LOOP(T, <) break;                                               \
    case CMP_GT: CMP_LOOP(T, >) break;                                               \
    case CMP_LE: CMP_LOOP(T, <=) break;                                              \
    default: CMP_LOOP(T, >=) break;                                                  \
    }

static int cmp_typed(int kind, const sb_tval *a, const sb_tval *b, sb_tval *y)
{
    int dt = a->info.dtype;
    if (dt != b->info.dtype || (dt != SB_DT_FLOAT && dt != SB_DT_INT32 && dt != SB_DT_INT64))
        return 0;
    int64_t shape[SB_MAX_RANK], sa[SB_MAX_RANK], sbb[SB_MAX_RANK], sy[SB_MAX_RANK];
    memcpy(shape, y->info.dims, sizeof shape);
    sb_broadcast_strides(&a->info, &y->info, sa);
    sb_broadcast_strides(&b->info, &y->info, sbb);
    sb_c_strides(&y->info, sy);
    int64_t *st[3] = {sa, sbb, sy};
    int rank = sb_merge_walk(y->info.rank, shape, 3, st);
    int64_t inner = shape[rank - 1], xa = sa[rank - 1], xb = sbb[rank - 1];
    int64_t total = sb_vinfo_numel(&y->info), size = sb_dtype_size(dt);
    int64_t idx[SB_MAX_RANK] = {0}, oa = 0, ob = 0;
    for (int64_t row = 0; row * inner < total; ++row) {
        const uint8_t *pa = (const uint8_t *)a->data + oa * size;
        const uint8_t *pb = (const uint8_t *)b->data + ob * size;
        uint8_t *out = (uint8_t *)y->data + row * inner;
        if (dt == SB_DT_FLOAT) { CMP_KINDS(float) }   /* IEEE (in the kernels' environment) */
        else if (dt == SB_DT_INT32) { CMP_KINDS(int32_t) }
        else if (kind == CMP_EQ) { CMP_EQ64 }
        else { CMP_KINDS(int64_t) }
        for (int d = rank - 2; d >= 0; --d) {   /* the next row */
            oa += sa[d], ob += sbb[d];
            if (++idx[d] < shape[d]) break;
            oa -= sa[d] * shape[d], ob -= sbb[d] * shape[d];
            idx[d] = 0;
        }
    }
    return 1;
}

static int cmp_run(sb_run_ctx *R)
{
    const cmp_state *s = R->state;
    sb_tval *y = R->out[0];
    uint8_t *out = y->data;
    int64_t n = sb_vinfo_numel(&y->info);
    const sb_tval *a = R->in[0];
    if (s->kind == LOG_NOT) {
        for (int64_t i = 0; i < n; ++i) out[i] = sb_int_at(a, i) == 0;
        return SB_OK;
    }
    const sb_tval *b = R->in[1];
    const sb_tval *ops[2] = {a, b};
    bwalk w;
    bwalk_init(&w, &y->info, ops, 2);
    if (s->kind >= LOG_AND) {
        for (int64_t i = 0; i < n; ++i, bwalk_next(&w)) {
            int p = sb_int_at(a, w.off[0]) != 0, q = sb_int_at(b, w.off[1]) != 0;
            out[i] = (uint8_t)(s->kind == LOG_AND ? p && q : s->kind == LOG_OR ? p || q : p != q);
        }
        return SB_OK;
    }
    /* float comparisons in the kernels' floating-point environment: a
     * caller's denormals-are-zero must not make a subnormal equal to 0 */
    sb_fpenv env;
    sb_fpenv_enter(&env);
    int done = n > 0 && cmp_typed(s->kind, a, b, y);
    sb_fpenv_leave(&env);
    if (done) return SB_OK;
    if (a->info.dtype == SB_DT_FLOAT) {   /* IEEE: NaN compares false, -0 == +0 */
        for (int64_t i = 0; i < n; ++i, bwalk_next(&w)) {
            float p = float_at(a, w.off[0]), q = float_at(b, w.off[1]);
            int r;
            switch (s->kind) {
            case CMP_EQ: r = p == q; break;
            case CMP_LT: r = p < q; break;
            case CMP_GT: r = p > q; break;
            case CMP_LE: r = p <= q; break;
            default: r = p >= q; break;
            }
            out[i] = (uint8_t)r;
        }
        return SB_OK;
    }
    int sa = sb_dtype_is_signed(a->info.dtype), sbs = sb_dtype_is_signed(b->info.dtype);
    for (int64_t i = 0; i < n; ++i, bwalk_next(&w))
        out[i] = (uint8_t)cmp_of(s->kind, int_cmp(sb_int_at(a, w.off[0]), sa,
                                                  sb_int_at(b, w.off[1]), sbs));
    return SB_OK;
}

/* ---- Softmax, LogSoftmax --------------------------------------------------------------- */

typedef struct { int64_t axis; int flat, log_form; } softmax_state;

static int softmax_load(sb_load_ctx *L)
{
    softmax_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->flat = L->opset < 13;   /* before opset 13: the input as 2-D, [:axis] by [axis:] */
    s->axis = sb_attr_int(L, "axis", s->flat ? 1 : -1);
    s->log_form = !strcmp(L->node->op_type, "LogSoftmax");
    return L->status;
}

/* x as (outer, n, inner) with the softmax over n. */
static int softmax_dims(sb_infer_ctx *I, const sb_vinfo *x, int64_t *outer, int64_t *n, int64_t *inner)
{
    const softmax_state *s = I->state;
    int a = 0;
    if (!s->flat || x->rank) {
        int status = sb_infer_axis(I, s->axis, x->rank, "axis", &a);
        if (status) return status;
    }
    *outer = 1, *n = 1, *inner = 1;
    for (int d = 0; d < x->rank; ++d) {
        if (d < a) *outer *= x->dims[d];
        else if (d == a || s->flat) *n *= x->dims[d];
        else *inner *= x->dims[d];
    }
    return SB_OK;
}

static int softmax_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_float(I, 0, "input");
    if (!x) return SB_ERR_TYPE;
    I->out[0] = x->info;
    /* softmax writes over its input safely; log_softmax along rows would
     * have the kernel copy its input first (reduce.c), so it never shares */
    const softmax_state *s = I->state;
    I->inplace = s->log_form ? -1 : 0;
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    int64_t outer, n, inner;
    return softmax_dims(I, &x->info, &outer, &n, &inner);
}

static int softmax_run(sb_run_ctx *R)
{
    const softmax_state *s = R->state;
    const sb_tval *x = R->in[0];
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    /* the dimensions as infer found them (an infer context over the run's input) */
    sb_infer_ctx I;
    memset(&I, 0, sizeof I);
    I.node = R->node, I.state = R->state;
    int64_t outer, n, inner;
    int status = softmax_dims(&I, &x->info, &outer, &n, &inner);
    if (status) return status;
    sb_reduce_args args;
    memset(&args, 0, sizeof args);
    args.path = R->path, args.mode = R->mode, args.max_threads = R->threads;
    args.op = s->log_form ? 3 : 2;   /* SB_RED_LOG_SOFTMAX, SB_RED_SOFTMAX (reduce.c) */
    args.outer = outer, args.n = n, args.inner = inner;
    args.x = (int64_t)(intptr_t)x->data, args.y = (int64_t)(intptr_t)R->out[0]->data;
    return sb_reduce(&args);
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
    {"Neg", fn_load, fn_infer, fn_run, 0},
    {"Reciprocal", fn_load, fn_infer, fn_run, 0},
    {"Abs", fn_load, fn_infer, fn_run, 0},
    {"Floor", fn_load, fn_infer, fn_run, 0},
    {"Ceil", fn_load, fn_infer, fn_run, 0},
    {"Round", fn_load, fn_infer, fn_run, 0},
    {"LeakyRelu", fn_load, fn_infer, fn_run, 0},
    {"HardSigmoid", fn_load, fn_infer, fn_run, 0},
    {"Elu", fn_load, fn_infer, fn_run, 0},
    {"Selu", fn_load, fn_infer, fn_run, 0},
    {"Softsign", fn_load, fn_infer, fn_run, 0},
    {"HardSwish", fn_load, fn_infer, fn_run, 0},
    {"Gelu", fn_load, fn_infer, fn_run, 0},
    {"Mod", mod_load, mod_infer, mod_run, 0},
    {"Clip", clip_load, clip_infer, clip_run, 0},
    {"PRelu", NULL, prelu_infer, prelu_run, 0},
    {"Where", NULL, where_infer, where_run, 0},
    {"Equal", cmp_load, cmp_infer, cmp_run, 0},
    {"Less", cmp_load, cmp_infer, cmp_run, 0},
    {"Greater", cmp_load, cmp_infer, cmp_run, 0},
    {"LessOrEqual", cmp_load, cmp_infer, cmp_run, 0},
    {"GreaterOrEqual", cmp_load, cmp_infer, cmp_run, 0},
    {"And", cmp_load, cmp_infer, cmp_run, 0},
    {"Or", cmp_load, cmp_infer, cmp_run, 0},
    {"Xor", cmp_load, cmp_infer, cmp_run, 0},
    {"Not", cmp_load, cmp_infer, cmp_run, 0},
    {"Softmax", softmax_load, softmax_infer, softmax_run, 0},
    {"LogSoftmax", softmax_load, softmax_infer, softmax_run, 0},
    {0},
};
