/* The comparisons and logic (docs/onnx.md): Equal, Less, Greater, LessOrEqual,
 * GreaterOrEqual, And, Or, Xor and Not. */
#include <string.h>
#include "math/arith.h"
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "isa/unary.h"
#include "graph/ops/math/math_util.h"
#include "framework/step.h"
#include "kernels/strided_rows.h"

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
    int status = sb_infer_broadcast(I, shapes, 2, &I->out[0]);
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

/* One typed comparison's walk: rows of `inner` outputs, threads taking runs
 * of whole rows (each row's operands found from its index). */
typedef struct {
    int kind, dt, rank;
    int64_t shape[SB_MAX_RANK], sa[SB_MAX_RANK], sb[SB_MAX_RANK];
    int64_t inner, xa, xb, size;
    const sb_tval *a, *b;
    sb_tval *y;
    sb_step_plan plan;            /* units: output rows */
} cmp_job;

static void cmp_rows(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const cmp_job *job = ctx;
    const int kind = job->kind, dt = job->dt;
    const int64_t inner = job->inner, xa = job->xa, xb = job->xb;
    size_t first, end;
    sb_step_units(&job->plan, chunk, &first, &end);
    for (size_t row = first; row < end; ++row) {
        ptrdiff_t oa, ob;
        sb_row_offsets(row, job->rank, job->shape, job->sa, job->sb, &oa, &ob);
        const uint8_t *pa = (const uint8_t *)job->a->data + oa * job->size;
        const uint8_t *pb = (const uint8_t *)job->b->data + ob * job->size;
        uint8_t *out = (uint8_t *)job->y->data + (int64_t)row * inner;
        if (dt == SB_DT_FLOAT) { CMP_KINDS(float) }   /* IEEE (in the kernels' environment) */
        else if (dt == SB_DT_INT32) { CMP_KINDS(int32_t) }
        else if (kind == CMP_EQ) { CMP_EQ64 }
        else { CMP_KINDS(int64_t) }
    }
}

static int cmp_typed(int kind, const sb_tval *a, const sb_tval *b, sb_tval *y, int threads)
{
    int dt = a->info.dtype;
    if (dt != b->info.dtype || (dt != SB_DT_FLOAT && dt != SB_DT_INT32 && dt != SB_DT_INT64))
        return 0;
    cmp_job job = {.kind = kind, .dt = dt, .a = a, .b = b, .y = y};
    int64_t sy[SB_MAX_RANK];
    memcpy(job.shape, y->info.dims, sizeof job.shape);
    sb_broadcast_strides(&a->info, &y->info, job.sa);
    sb_broadcast_strides(&b->info, &y->info, job.sb);
    sb_c_strides(&y->info, sy);
    int64_t *st[3] = {job.sa, job.sb, sy};
    job.rank = sb_merge_walk(y->info.rank, job.shape, 3, st);
    job.inner = job.shape[job.rank - 1];
    job.xa = job.sa[job.rank - 1], job.xb = job.sb[job.rank - 1];
    job.size = sb_dtype_size(dt);
    const int64_t total = sb_vinfo_numel(&y->info);
    job.plan = sb_plan_step((size_t)(total / job.inner),
                            sb_units_per_chunk((size_t)job.inner, SB_STEP_CHUNK_ITEMS),
                            (double)total * SB_COST_MOVE);
    sb_run_step(&job.plan, threads, cmp_rows, &job);
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
    /* float comparisons in the kernels' floating-point environment (every
     * thread of sb_run_step enters it): a caller's denormals-are-zero must
     * not make a subnormal equal to 0 */
    if (n > 0 && cmp_typed(s->kind, a, b, y, R->threads)) return SB_OK;
    sb_fpenv env;
    sb_fpenv_enter(&env);
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
        sb_fpenv_leave(&env);
        return SB_OK;
    }
    sb_fpenv_leave(&env);
    int sa = sb_dtype_is_signed(a->info.dtype), sbs = sb_dtype_is_signed(b->info.dtype);
    for (int64_t i = 0; i < n; ++i, bwalk_next(&w))
        out[i] = (uint8_t)cmp_of(s->kind, int_cmp(sb_int_at(a, w.off[0]), sa,
                                                  sb_int_at(b, w.off[1]), sbs));
    return SB_OK;
}

const sb_op_def sb_op_Equal = {
    .name = "Equal", .load = cmp_load, .infer = cmp_infer, .run = cmp_run};
const sb_op_def sb_op_Less = {.name = "Less", .load = cmp_load, .infer = cmp_infer, .run = cmp_run};
const sb_op_def sb_op_Greater = {
    .name = "Greater", .load = cmp_load, .infer = cmp_infer, .run = cmp_run};
const sb_op_def sb_op_LessOrEqual = {
    .name = "LessOrEqual", .load = cmp_load, .infer = cmp_infer, .run = cmp_run};
const sb_op_def sb_op_GreaterOrEqual = {
    .name = "GreaterOrEqual", .load = cmp_load, .infer = cmp_infer, .run = cmp_run};
const sb_op_def sb_op_And = {.name = "And", .load = cmp_load, .infer = cmp_infer, .run = cmp_run};
const sb_op_def sb_op_Or = {.name = "Or", .load = cmp_load, .infer = cmp_infer, .run = cmp_run};
const sb_op_def sb_op_Xor = {.name = "Xor", .load = cmp_load, .infer = cmp_infer, .run = cmp_run};
const sb_op_def sb_op_Not = {.name = "Not", .load = cmp_load, .infer = cmp_infer, .run = cmp_run};
