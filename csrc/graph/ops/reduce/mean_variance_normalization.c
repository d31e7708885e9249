/* ONNX MeanVarianceNormalization (docs/onnx.md), as its function body
 * computes it in float32 with samebits' ReduceMean: over `axes` (default
 * [0, 2, 3]), per kept index, mean = (+0 + x0 + x1 + ...) / count and
 * mean_sq = (+0 + x0*x0 + ...) / count, the reduced elements in row-major
 * order; y = (x - mean) / (sqrt(mean_sq - mean*mean) + 1e-9), each
 * operation rounded (1e-9 as float32). */
#include <math.h>
#include <string.h>
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"
#include "math/arith.h"

typedef struct { ints_attr axes; } mvn_state;

static int mvn_load(sb_load_ctx *L)
{
    mvn_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    return read_ints_attr(L, "axes", 0, &s->axes);
}

/* The reduced axes as flags; SB_OK or an error. */
static int mvn_axes(sb_infer_ctx *I, const sb_tval *x, int *reduced)
{
    const mvn_state *s = I->state;
    int r = x->info.rank, axes[SB_MAX_RANK];
    memset(reduced, 0, (size_t)r * sizeof *reduced);
    if (s->axes.has) {
        int status = norm_axes(I, s->axes.v, s->axes.n, r, "axes", axes);
        if (status) return status;
        for (size_t k = 0; k < s->axes.n; ++k) reduced[axes[k]] = 1;
    } else {
        if (r != 4) return sb_infer_fail(I, SB_ERR_VALUE, "the default axes [0, 2, 3] need a 4-D X");
        reduced[0] = reduced[2] = reduced[3] = 1;
    }
    return SB_OK;
}

static int mvn_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_float(I, 0, "X");
    if (!x) return SB_ERR_TYPE;
    int reduced[SB_MAX_RANK];
    int status = mvn_axes(I, x, reduced);
    if (status) return status;
    I->out[0] = x->info;
    int64_t kept = 1;
    for (int a = 0; a < x->info.rank; ++a) kept *= reduced[a] ? 1 : x->info.dims[a];
    I->workspace = 8 * kept + 64;   /* the sums, then the means and divisors */
    return SB_OK;
}

static int mvn_run(sb_run_ctx *R)
{
    sb_infer_ctx I;
    sb_vinfo outs[1];
    sb_infer_from_run(R, &I, outs);
    const sb_tval *x = R->in[0];
    int reduced[SB_MAX_RANK];
    int status = mvn_axes(&I, x, reduced);
    if (status) return status;
    int r = x->info.rank;
    const int64_t *d = x->info.dims;
    int64_t kept = 1, count = 1;
    for (int a = 0; a < r; ++a) {
        if (reduced[a]) count *= d[a];
        else kept *= d[a];
    }
    int64_t total = sb_vinfo_numel(&x->info);
    if (total == 0) return SB_OK;
    float *sum = R->workspace, *sum_sq = sum + kept;
    memset(sum, 0, (size_t)(2 * kept) * sizeof *sum);
    const float *xd = x->data;
    float *y = R->out[0]->data;
    /* the reduced elements in row-major order (the outer loop), so each kept
     * index's sums take their terms in that order */
    int64_t step[SB_MAX_RANK], acc = 1;
    for (int a = r - 1; a >= 0; --a) step[a] = acc, acc *= d[a];
    for (int64_t red = 0; red < count; ++red) {
        /* the reduced index `red` (row-major over reduced axes) with every kept index */
        int64_t rem = red, base = 0;
        for (int a = r - 1; a >= 0; --a)
            if (reduced[a]) base += (rem % d[a]) * step[a], rem /= d[a];
        for (int64_t k = 0; k < kept; ++k) {
            int64_t krem = k, at = base;
            for (int a = r - 1; a >= 0; --a)
                if (!reduced[a]) at += (krem % d[a]) * step[a], krem /= d[a];
            float v = xd[at];
            sum[k] = sum[k] + v;
            sum_sq[k] = sum_sq[k] + sb_bin_mul(v, v);
        }
    }
    float n = (float)count, eps = 1e-9f;
    for (int64_t k = 0; k < kept; ++k) {
        float mean = sum[k] / n, mean_sq = sum_sq[k] / n;
        float stdv = sqrtf(mean_sq - sb_bin_mul(mean, mean));
        sum[k] = mean, sum_sq[k] = stdv + eps;
    }
    for (int64_t at = 0; at < total; ++at) {
        int64_t rem = at, k = 0, mul = 1;
        for (int a = r - 1; a >= 0; --a) {
            int64_t i = rem % d[a];
            rem /= d[a];
            if (!reduced[a]) k += i * mul, mul *= d[a];
        }
        y[at] = sbt_canonical((xd[at] - sum[k]) / sum_sq[k]);
    }
    return SB_OK;
}

const sb_op_def sb_op_MeanVarianceNormalization = {
    .name = "MeanVarianceNormalization", .load = mvn_load, .infer = mvn_infer, .run = mvn_run};
