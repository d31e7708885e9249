/* ONNX Range (docs/onnx.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

/* An integer element's exact value: sign and magnitude. */
static void int_value(const sb_tval *t, int64_t i, int *neg, uint64_t *mag)
{
    if (t->info.dtype == SB_DT_UINT64) {
        *neg = 0, *mag = sb_int_at_u(t, i);
        return;
    }
    int64_t v = sb_int_at(t, i);
    *neg = v < 0;
    *mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

/* ceil((hi * 2^64 + lo) / d) for d > 0; 0 when it is above 2^63 - 1. */
static int ceil_div_128(uint64_t hi, uint64_t lo, uint64_t d, uint64_t *out)
{
    uint64_t qhi = 0, qlo = 0, r = 0;
    for (int bit = 127; bit >= 0; --bit) {
        uint64_t top = r >> 63;
        uint64_t next = bit >= 64 ? (hi >> (bit - 64)) & 1 : (lo >> bit) & 1;
        r = (r << 1) | next;
        if (top || r >= d) {
            r -= d;
            if (bit >= 64) qhi |= (uint64_t)1 << (bit - 64);
            else qlo |= (uint64_t)1 << bit;
        }
    }
    if (r && ++qlo == 0) ++qhi;
    if (qhi || qlo > (uint64_t)INT64_MAX) return 0;
    *out = qlo;
    return 1;
}

/* Range's element count over integers: max(0, ceil((limit - start) / delta)),
 * exactly; -1 when it is too large. */
static int64_t int_range_count(const sb_tval *a, const sb_tval *b, const sb_tval *d)
{
    int fn, sn, dn;
    uint64_t fm, sm, dm;
    int_value(a, 0, &fn, &fm);
    int_value(b, 0, &sn, &sm);
    int_value(d, 0, &dn, &dm);
    int neg;
    uint64_t mag, carry = 0;
    if (sn == fn) {   /* limit - start, both of one sign */
        if (sm >= fm) mag = sm - fm, neg = sn;
        else mag = fm - sm, neg = !sn;
    } else {
        mag = sm + fm;
        carry = mag < sm;
        neg = sn;
    }
    if ((mag == 0 && !carry) || neg != dn) return 0;
    uint64_t count;
    if (!ceil_div_128(carry, mag, dm, &count)) return -1;
    return (int64_t)count;
}

static int range_infer(sb_infer_ctx *I)
{
    static const char *const what[3] = {"start", "limit", "delta"};
    const sb_tval *t[3];
    int all_int = 1;
    for (int k = 0; k < 3; ++k) {
        if (!(t[k] = sb_infer_input(I, k, what[k]))) return SB_ERR_VALUE;
        all_int &= sb_dtype_is_int(t[k]->info.dtype);
    }
    if (!all_int)
        for (int k = 0; k < 3; ++k)
            if (!sb_infer_float(I, k, what[k])) return SB_ERR_TYPE;
    for (int k = 0; k < 3; ++k)
        if (lacks_data(t[k])) return SB_NEEDS_VALUES;
    for (int k = 0; k < 3; ++k)
        if (sb_vinfo_numel(&t[k]->info) == 0)
            return sb_infer_fail(I, SB_ERR_INDEX, "list index out of range");
    int64_t count;
    if (all_int) {
        int neg;
        uint64_t mag;
        int_value(t[2], 0, &neg, &mag);
        if (mag == 0) return sb_infer_fail(I, SB_ERR_VALUE, "delta is 0");
        count = int_range_count(t[0], t[1], t[2]);
        I->out[0].dtype = t[0]->info.dtype;
    } else {
        float start = *(const float *)t[0]->data, limit = *(const float *)t[1]->data;
        float delta = *(const float *)t[2]->data;
        if (delta == 0.0f || !isfinite(start) || !isfinite(limit) || !isfinite(delta))
            return sb_infer_fail(I, SB_ERR_VALUE, "start, limit and delta must be finite, delta "
                                 "nonzero");
        double n = ceil(((double)limit - (double)start) / (double)delta);
        count = n <= 0.0 ? 0 : n > (double)SB_MAX_ELEMENTS ? -1 : (int64_t)n;
        I->out[0].dtype = SB_DT_FLOAT;
    }
    if (count < 0 || count > SB_MAX_ELEMENTS)
        return sb_infer_fail(I, SB_ERR_VALUE, "the output would have more than 2^40 elements");
    I->out[0].rank = 1;
    I->out[0].dims[0] = count;
    return SB_OK;
}

static int range_run(sb_run_ctx *R)
{
    sb_tval *y = R->out[0];
    int64_t n = y->info.dims[0];
    if (n == 0) return SB_OK;
    if (y->info.dtype != SB_DT_FLOAT) {
        uint64_t first = (uint64_t)sb_int_at(R->in[0], 0), step = (uint64_t)sb_int_at(R->in[2], 0);
        for (int64_t i = 0; i < n; ++i)
            sb_int_store(y->data, y->info.dtype, i, (int64_t)(first + (uint64_t)i * step));
        return SB_OK;
    }
    /* output[i] = start + i * delta: one float32 multiply and one add, in
     * exact mode whatever the session's (as Python's runner computes it) */
    float start = *(const float *)R->in[0]->data, delta = *(const float *)R->in[2]->data;
    float *out = y->data;
    for (int64_t i = 0; i < n; ++i) out[i] = (float)i;
    sb_run_ctx E = *R;
    E.mode = SB_MODE_EXACT;
    int status = sb_k_binary_scalar(&E, SB_BIN_MUL, y, delta, y);
    if (!status) status = sb_k_binary_scalar(&E, SB_BIN_ADD, y, start, y);
    return status ? sb_run_fail(R, status, "the float32 kernels failed") : SB_OK;
}

/* stash_type (opset 27) sets the precision of float16 and bfloat16 ranges;
 * it has no effect on the types Range runs here (float32 and integers). */
static int range_load(sb_load_ctx *L)
{
    sb_attr_ignore(L, "stash_type");
    return L->status;
}

const sb_op_def sb_op_Range = {.name = "Range", .load = range_load, .infer = range_infer, .run = range_run};
