/* ONNX BitShift, BitwiseAnd, BitwiseOr, BitwiseXor and BitwiseNot
 * (docs/onnx.md): on the two's-complement bits of integer tensors of one
 * type, with numpy's broadcasting; exact on every path. */
#include <string.h>
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/math/math_util.h"

enum { BIT_AND, BIT_OR, BIT_XOR, BIT_NOT, BIT_LEFT, BIT_RIGHT };

typedef struct { int kind; } bit_state;

static int bitwise_load(sb_load_ctx *L)
{
    bit_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    const char *op = L->node->op_type;
    if (!strcmp(op, "BitShift")) {
        const char *dir = sb_attr_str(L, "direction", "");
        if (L->status) return L->status;
        if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "direction '%s' is not LEFT or RIGHT", dir);
        s->kind = strcmp(dir, "LEFT") == 0 ? BIT_LEFT : BIT_RIGHT;
    } else {
        s->kind = !strcmp(op, "BitwiseAnd") ? BIT_AND : !strcmp(op, "BitwiseOr") ? BIT_OR
                : !strcmp(op, "BitwiseXor") ? BIT_XOR : BIT_NOT;
    }
    return L->status;
}

/* An integer input other than bool. */
static const sb_tval *int_input(sb_infer_ctx *I, int i, const char *what)
{
    const sb_tval *t = sb_infer_int(I, i, what);
    if (t && t->info.dtype == SB_DT_BOOL) {
        sb_infer_fail(I, SB_ERR_TYPE, "input %s must be an integer tensor, got bool", what);
        return NULL;
    }
    return t;
}

static int bitwise_infer(sb_infer_ctx *I)
{
    const bit_state *s = I->state;
    int shift = s->kind >= BIT_LEFT;
    const sb_tval *a = int_input(I, 0, shift ? "X" : "A");
    if (!a) return SB_ERR_TYPE;
    if (s->kind == BIT_NOT) {
        I->out[0] = a->info;
        I->inplace = 0;
        return SB_OK;
    }
    const sb_tval *b = int_input(I, 1, shift ? "Y" : "B");
    if (!b) return SB_ERR_TYPE;
    if (a->info.dtype != b->info.dtype)
        return sb_infer_fail(I, SB_ERR_TYPE, "inputs of types %s and %s: both must have one type",
                             sb_dtype_name(a->info.dtype), sb_dtype_name(b->info.dtype));
    return broadcast_as_first(I, a, b);
}

/* x shifted by y places (the values of their type; bits: the type's width).
 * A shift out of [0, bits) leaves what the sign alone gives: -1 for a right
 * shift of a negative x, else 0 (ONNX's rule, opset 28). The store keeps the
 * type's low bits, so a left shift wraps past the sign bit. */
static int64_t shifted(int kind, int64_t x, int64_t y, int bits, int is_signed)
{
    if (y < 0 || y >= bits) return kind == BIT_RIGHT && is_signed && x < 0 ? -1 : 0;
    if (kind == BIT_LEFT) return (int64_t)((uint64_t)x << y);
    if (is_signed) return x < 0 ? ~(~x >> y) : x >> y;   /* arithmetic, without relying on C's >> */
    return (int64_t)((uint64_t)x >> y);
}

static int bitwise_run(sb_run_ctx *R)
{
    const bit_state *s = R->state;
    sb_tval *y = R->out[0];
    const sb_tval *a = R->in[0], *b = s->kind == BIT_NOT ? R->in[0] : R->in[1];
    int64_t n = sb_vinfo_numel(&y->info);
    int bits = 8 * sb_dtype_size(a->info.dtype), is_signed = sb_dtype_is_signed(a->info.dtype);
    const sb_tval *ops[2] = {a, b};
    bwalk w;
    bwalk_init(&w, &y->info, ops, 2);
    for (int64_t i = 0; i < n; ++i, bwalk_next(&w)) {
        /* the values as their type holds them: unsigned ones zero-extended */
        int64_t u = is_signed ? sb_int_at(a, w.off[0]) : (int64_t)sb_int_at_u(a, w.off[0]);
        int64_t v = is_signed ? sb_int_at(b, w.off[1]) : (int64_t)sb_int_at_u(b, w.off[1]);
        int64_t r;
        switch (s->kind) {
        case BIT_AND: r = u & v; break;
        case BIT_OR: r = u | v; break;
        case BIT_XOR: r = u ^ v; break;
        case BIT_NOT: r = ~u; break;
        default:   /* an unsigned 64-bit amount above 2^63 - 1 reads negative: out of range too */
            r = shifted(s->kind, u, v, bits, is_signed);
        }
        sb_int_store(y->data, y->info.dtype, i, r);
    }
    return SB_OK;
}

const sb_op_def sb_op_BitShift = {.name = "BitShift", .load = bitwise_load, .infer = bitwise_infer,
                                  .run = bitwise_run};
const sb_op_def sb_op_BitwiseAnd = {.name = "BitwiseAnd", .load = bitwise_load, .infer = bitwise_infer,
                                    .run = bitwise_run};
const sb_op_def sb_op_BitwiseOr = {.name = "BitwiseOr", .load = bitwise_load, .infer = bitwise_infer,
                                   .run = bitwise_run};
const sb_op_def sb_op_BitwiseXor = {.name = "BitwiseXor", .load = bitwise_load, .infer = bitwise_infer,
                                    .run = bitwise_run};
const sb_op_def sb_op_BitwiseNot = {.name = "BitwiseNot", .load = bitwise_load, .infer = bitwise_infer,
                                    .run = bitwise_run};
