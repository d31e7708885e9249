/* ONNX Mod (docs/onnx.md): Python's and C's remainders, of integers (exact)
 * and of float32 values (math/arith.h: sb_fmod32, sb_pymod32). */
#include <string.h>
#include "math/arith.h"
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "isa/unary.h"
#include "graph/ops/math/math_util.h"

typedef struct { int64_t fmod; } mod_state;   /* .int_attrs, in order */

static int mod_infer(sb_infer_ctx *I)
{
    const sb_tval *a0 = sb_infer_input(I, 0, "A");
    if (!a0) return SB_ERR_VALUE;
    int floats = a0->info.dtype == SB_DT_FLOAT;
    const sb_tval *a = floats ? a0 : sb_infer_int(I, 0, "A");
    if (!a) return SB_ERR_TYPE;
    const sb_tval *b = floats ? sb_infer_float(I, 1, "B") : sb_infer_int(I, 1, "B");
    if (!b) return SB_ERR_TYPE;
    return broadcast_as_first(I, a, b);
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
    const sb_tval *ops[2] = {a, b};
    bwalk w;
    bwalk_init(&w, &y->info, ops, 2);
    if (a->info.dtype == SB_DT_FLOAT) {
        const float *xa = a->data, *xb = b->data;
        float *out = y->data;
        for (int64_t i = 0; i < n; ++i, bwalk_next(&w)) {
            float u = xa[w.off[0]], v = xb[w.off[1]];
            out[i] = s->fmod ? sb_fmod32(u, v) : sb_pymod32(u, v);
        }
        return SB_OK;
    }
    int sa = sb_dtype_is_signed(a->info.dtype), sbs = sb_dtype_is_signed(b->info.dtype);
    for (int64_t i = 0; i < n; ++i, bwalk_next(&w)) {
        uint64_t r;
        if (!int_mod(sb_int_at(a, w.off[0]), sa, sb_int_at(b, w.off[1]), sbs, s->fmod != 0, &r))
            return sb_run_fail(R, SB_ERR_VALUE, "modulo by zero");
        sb_int_store(y->data, y->info.dtype, i, (int64_t)r);
    }
    return SB_OK;
}

const sb_op_def sb_op_Mod = {
    .name = "Mod", .int_attrs = {{"fmod", 0}}, .infer = mod_infer, .run = mod_run};
