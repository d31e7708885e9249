/* sb_reduce: reductions and normalizations over one axis of a C-contiguous
 * float32 tensor seen as (outer, n, inner): the axis is n, element (o, j, i)
 * at x[(o * n + j) * inner + i]. docs/exact-ops.md ("Reductions") defines
 * each in a fixed order: every sum runs over j = 0, 1, ..., n-1 from +0, one
 * float32 add per term, whatever the layout, the vector width (lanes hold
 * different i) or the thread count (threads take whole (o, i-block) units). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "samebits.h"
#include "isa/isa.h"
#include "math/activation.h"
#include "framework/checked.h"
#include "framework/step.h"
#include "isa/vec4.h"
#include "kernels/row_extreme.h"

#define BLOCK 256                 /* columns i per unit of work */
#define ROWS 16                   /* rows per chunk along the last axis */

/* The operation codes: enum sb_reduce_op of samebits.h (tools/make_tables.py). */

typedef struct {
    const sb_reduce_args *args;
    sb_unary_kernel_fn unary;     /* the path's elementwise kernel (exp) of the mode */
    sb_unary_kernel_fn exact;     /* its exact one: columns use the exact exp in both modes */
    sb_binary_row_fn binary_row;  /* the path's rows of a binary operation (arith.h) */
    /* fast softmax's rows, the path's own (isa/avx512/softmax_row_avx512.h); null in
     * exact mode and on paths without one */
    void (*softmax_row_fast)(const float *x, float *y, size_t n);
    /* the path's serial row sums (isa/unary_template.h) */
    void (*row_sums)(const float *x, size_t rows, size_t n, const float *mean, float *acc);
    size_t outer, n, inner, blocks;
    sb_step_plan plan;            /* units: rows (ROWS a chunk), or (o, column block) pairs */
    const float *x, *weight, *bias;
    float *y;
    float eps;
} reduce_job;

/* Sums over j of column block [i0, i0 + w) of one o: acc[i] from +0. */
static void column_sums(const float *x, size_t n, size_t inner, size_t w, float *acc)
{
    for (size_t i = 0; i < w; ++i) acc[i] = 0.0f;
    for (size_t j = 0; j < n; ++j) {
        const float *row = x + j * inner;
        for (size_t i = 0; i < w; ++i) acc[i] = acc[i] + row[i];
    }
}

/* The softmax steps of one column block: m = max over j (NaN if any is
 * NaN) plus +0 (a zero maximum is +0 whatever the order of -0 and +0, so a
 * compiler's choice of max instruction cannot show), s = the sum of
 * e^(x - m) over j; then y = e^(x - m) / s, or for log_softmax
 * (x - m) - log(s). */
static void softmax_block(const float *x, float *y, size_t n, size_t inner, size_t w, int log_form,
                          sb_unary_kernel_fn exact)
{
    float m[BLOCK], s[BLOCK], e[BLOCK];
    for (size_t i = 0; i < w; ++i) m[i] = x[i];
    for (size_t j = 1; j < n; ++j) {
        const float *row = x + j * inner;
        for (size_t i = 0; i < w; ++i) {
            float v = row[i];
            /* NaN wins: once m is NaN it stays (NaN > v and v > NaN are false) */
            m[i] = (v != v) ? v : (v > m[i] ? v : m[i]);
        }
    }
    for (size_t i = 0; i < w; ++i) m[i] = m[i] + 0.0f;
    for (size_t i = 0; i < w; ++i) s[i] = 0.0f;
    for (size_t j = 0; j < n; ++j) {
        const float *row = x + j * inner;
        float *out = y + j * inner;
        for (size_t i = 0; i < w; ++i) e[i] = row[i] - m[i];
        exact(SB_OP_EXP, 0.0f, e, e, w);   /* the path's vector kernel: sb_exact_exp's bits */
        for (size_t i = 0; i < w; ++i) s[i] = s[i] + e[i];
        if (!log_form)
            for (size_t i = 0; i < w; ++i) out[i] = e[i];
    }
    if (log_form) {
        for (size_t i = 0; i < w; ++i) s[i] = sb_exact_log(s[i]);
        for (size_t j = 0; j < n; ++j) {
            const float *row = x + j * inner;
            float *out = y + j * inner;
            for (size_t i = 0; i < w; ++i) out[i] = sbt_canonical((row[i] - m[i]) - s[i]);
        }
    } else {
        for (size_t j = 0; j < n; ++j) {
            float *out = y + j * inner;
            for (size_t i = 0; i < w; ++i) out[i] = sbt_canonical(out[i] / s[i]);
        }
    }
}

/* ---- along the last axis (inner = 1): groups of up to ROWS rows -------------
 *
 * The same operations as the column code above, arranged for contiguous
 * rows: a row's maximum is order-free, elementwise steps run as vector loops
 * over the row, and the sums keep their order (j = 0, 1, ...) within each
 * row while ROWS rows advance together, so that the adds of different rows
 * overlap instead of waiting on one another. */

/* yr[j] = EXPR of xv = xr[j], for j < n, where yr may be xr: in place, a
 * loop over yr alone, since clang's vectorizer runs a two-pointer loop
 * scalar when the pointers are equal (unary_template.h's UNARY_EACH). */
#define ROW_MAP(xr, yr, n, EXPR)                                                             \
    do {                                                                                     \
        if ((const float *)(yr) == (xr))                                                     \
            for (size_t j = 0; j < (n); ++j) { const float xv = (yr)[j]; (yr)[j] = (EXPR); } \
        else                                                                                 \
            for (size_t j = 0; j < (n); ++j) { const float xv = (xr)[j]; (yr)[j] = (EXPR); } \
    } while (0)

/* Fast mode's row sums: 16 partial sums (lane l takes j = l, l + 16, ...),
 * added pairwise in a fixed pattern, then the tail in increasing j. A fixed
 * order, so the bits never depend on the thread count; not exact mode's
 * serial order. With `mean`, the sum of squared differences instead. */
static float row_sum_lanes(const float *x, size_t n, const float *mean)
{
    size_t j = 0;
    float total = 0.0f;
#if VEC4_AVAILABLE
    vec4 a0 = vec4_zero(), a1 = a0, a2 = a0, a3 = a0;
    if (mean) {
        vec4 m = vec4_splat(*mean);
        for (; j + 16 <= n; j += 16) {
            vec4 d0 = vec4_sub(vec4_load(x + j), m), d1 = vec4_sub(vec4_load(x + j + 4), m);
            vec4 d2 = vec4_sub(vec4_load(x + j + 8), m), d3 = vec4_sub(vec4_load(x + j + 12), m);
            a0 = vec4_add(a0, vec4_mul(d0, d0)); a1 = vec4_add(a1, vec4_mul(d1, d1));
            a2 = vec4_add(a2, vec4_mul(d2, d2)); a3 = vec4_add(a3, vec4_mul(d3, d3));
        }
    } else {
        for (; j + 16 <= n; j += 16) {
            a0 = vec4_add(a0, vec4_load(x + j)); a1 = vec4_add(a1, vec4_load(x + j + 4));
            a2 = vec4_add(a2, vec4_load(x + j + 8)); a3 = vec4_add(a3, vec4_load(x + j + 12));
        }
    }
    float lanes[4];
    vec4_store(lanes, vec4_add(vec4_add(a0, a1), vec4_add(a2, a3)));
    total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
#endif
    for (; j < n; ++j) {
        float t = mean ? (x[j] - *mean) * (x[j] - *mean) : x[j];
        total = total + t;
    }
    return total;
}

/* The largest value of a row, NaN if any is NaN, plus +0 (a zero maximum is
 * +0, whatever the signs of the row's zeros). */
static float row_max(const float *x, size_t n)
{
    return sbt_float(sb_row_extreme(x, n, 1)) + 0.0f;
}

static void softmax_rows(const reduce_job *job, const float *x, float *y, size_t rows, int log_form)
{
    size_t n = job->n;
    if (!log_form && job->softmax_row_fast) {
        for (size_t r = 0; r < rows; ++r) job->softmax_row_fast(x + r * n, y + r * n, n);
        return;
    }
    float m[ROWS], s[ROWS];
    for (size_t r = 0; r < rows; ++r) {
        m[r] = row_max(x + r * n, n);
        const float *xr = x + r * n;
        float *yr = y + r * n;
        float mr = m[r];
        ROW_MAP(xr, yr, n, xv - mr);
        job->unary(SB_OP_EXP, 0.0f, yr, yr, n);          /* e = exp(x - m) */
    }
    if (job->args->mode == SB_MODE_FAST)
        for (size_t r = 0; r < rows; ++r) s[r] = row_sum_lanes(y + r * n, n, NULL);
    else
        job->row_sums(y, rows, n, NULL, s);
    for (size_t r = 0; r < rows; ++r) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        float mr = m[r];
        if (log_form) {
            float ls = sb_exact_log(s[r]);
            for (size_t j = 0; j < n; ++j) yr[j] = sbt_canonical((xr[j] - mr) - ls);
        } else if (job->args->mode == SB_MODE_FAST) {
            /* fast mode: one reciprocal per row, then multiplies */
            const float inv = 1.0f / s[r];
            job->binary_row(SB_BIN_MUL, yr, 1, &inv, 0, yr, n);
        } else {
            /* at the path's width (sb_bin_div: one IEEE divide, NaN
             * canonical): this file's own loop is 4 lanes wide, and the
             * divides were a fifth of an exact softmax on avx512 */
            job->binary_row(SB_BIN_DIV, yr, 1, s + r, 0, yr, n);
        }
    }
}

static void layer_norm_rows(const reduce_job *job, const float *x, float *y, size_t rows)
{
    size_t n = job->n;
    float count = (float)n, mean[ROWS], acc[ROWS];
    if (job->args->mode == SB_MODE_FAST) {
        for (size_t r = 0; r < rows; ++r) mean[r] = row_sum_lanes(x + r * n, n, NULL) / count;
        for (size_t r = 0; r < rows; ++r) acc[r] = row_sum_lanes(x + r * n, n, mean + r);
    } else {
        job->row_sums(x, rows, n, NULL, acc);   /* serial, each row from +0 */
        for (size_t r = 0; r < rows; ++r) mean[r] = acc[r] / count;
        job->row_sums(x, rows, n, mean, acc);   /* of (x - mean)^2 */
    }
    for (size_t r = 0; r < rows; ++r) {
        float rr = 1.0f / __builtin_sqrtf(acc[r] / count + job->eps);
        const float *xr = x + r * n;
        float *yr = y + r * n;
        float mr = mean[r];
        const float *w = job->weight, *b = job->bias;
        if (w && b)
            ROW_MAP(xr, yr, n, sbt_canonical(((xv - mr) * rr) * w[j] + b[j]));
        else if (w)
            ROW_MAP(xr, yr, n, sbt_canonical(((xv - mr) * rr) * w[j]));
        else if (b)
            ROW_MAP(xr, yr, n, sbt_canonical(((xv - mr) * rr) + b[j]));
        else
            ROW_MAP(xr, yr, n, sbt_canonical((xv - mr) * rr));
    }
}

static void rows_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const reduce_job *job = (const reduce_job *)ctx;
    size_t row0, row_end;
    sb_step_units(&job->plan, chunk, &row0, &row_end);
    size_t rows = row_end - row0;
    const float *x = job->x + row0 * job->n;
    int op = (int)job->args->op;
    if (op == SB_RED_SUM || op == SB_RED_MEAN) {
        float acc[ROWS];
        job->row_sums(x, rows, job->n, NULL, acc);
        float count = (float)job->n;
        for (size_t r = 0; r < rows; ++r)
            job->y[row0 + r] = sbt_canonical(op == SB_RED_MEAN ? acc[r] / count : acc[r]);
    } else if (op == SB_RED_LAYER_NORM) {
        layer_norm_rows(job, x, job->y + row0 * job->n, rows);
    } else {
        softmax_rows(job, x, job->y + row0 * job->n, rows, op == SB_RED_LOG_SOFTMAX);
    }
}

static void reduce_chunk(void *ctx, size_t unit, int thread_index)
{
    (void)thread_index;
    const reduce_job *job = (const reduce_job *)ctx;
    size_t o = unit / job->blocks, i0 = (unit % job->blocks) * BLOCK;
    size_t w = job->inner - i0 < BLOCK ? job->inner - i0 : BLOCK;
    const float *x = job->x + o * job->n * job->inner + i0;
    int op = (int)job->args->op;
    if (op == SB_RED_SUM || op == SB_RED_MEAN) {
        float acc[BLOCK];
        column_sums(x, job->n, job->inner, w, acc);
        float *out = job->y + o * job->inner + i0;
        float count = (float)job->n;
        for (size_t i = 0; i < w; ++i)
            out[i] = sbt_canonical(op == SB_RED_MEAN ? acc[i] / count : acc[i]);
    } else {   /* layer_norm always has inner = 1: it never comes here */
        softmax_block(x, job->y + o * job->n * job->inner + i0, job->n, job->inner, w,
                      op == SB_RED_LOG_SOFTMAX, job->exact);
    }
}

int sb_reduce(const sb_reduce_args *args)
{
    if (!args) return SB_ERR_ARGUMENT;
    if (args->mode != SB_MODE_FAST && args->mode != SB_MODE_EXACT) return SB_ERR_ARGUMENT;
    if (args->op < 0 || args->op >= SB_RED_COUNT || args->max_threads < 1) return SB_ERR_ARGUMENT;
    if (args->path < 0 || args->path > INT32_MAX || !sb_path_supported((int)args->path))
        return SB_ERR_PATH;
    if (args->outer < 0 || args->n < 0 || args->inner < 0 || args->outer > SB_MAX_SIZE ||
        args->n > SB_MAX_SIZE || args->inner > SB_MAX_SIZE)
        return SB_ERR_ARGUMENT;
    if (args->eps < 0 || args->eps > (int64_t)UINT32_MAX) return SB_ERR_ARGUMENT;
    if (args->op == SB_RED_LAYER_NORM && args->inner != 1) return SB_ERR_ARGUMENT;
    if (args->op != SB_RED_LAYER_NORM && (args->weight || args->bias || args->eps))
        return SB_ERR_ARGUMENT;
    size_t total;
    if (!sb_mul3_ok((size_t)args->outer, (size_t)args->n, (size_t)args->inner, &total) ||
        total > SIZE_MAX / sizeof(float))
        return SB_ERR_ARGUMENT;
    reduce_job job = {.args = args, .outer = (size_t)args->outer, .n = (size_t)args->n,
                      .inner = (size_t)args->inner};
    size_t outputs = job.outer * job.inner;
    if (outputs == 0) return SB_OK;
    /* An empty axis: nothing to normalize; sums are +0 (the mean 0/0 is NaN). */
    if (job.n == 0 && args->op != SB_RED_SUM && args->op != SB_RED_MEAN) return SB_OK;
    if (!args->y || (total && !args->x)) return SB_ERR_ARGUMENT;
    job.x = (const float *)(intptr_t)args->x;
    job.y = (float *)(intptr_t)args->y;
    job.weight = (const float *)(intptr_t)args->weight;
    job.bias = (const float *)(intptr_t)args->bias;
    uint32_t eps_bits = (uint32_t)args->eps;
    memcpy(&job.eps, &eps_bits, sizeof job.eps);
    /* softmax's exp along rows: fast mode's own where the mode is fast */
    const sb_isa *isa = sb_isa_supported((int)args->path);
    job.unary = args->mode == SB_MODE_FAST ? isa->unary->fast : isa->unary->exact;
    job.exact = isa->unary->exact;
    job.binary_row = isa->unary->binary_row;
    job.softmax_row_fast = args->mode == SB_MODE_FAST ? isa->unary->softmax_row_fast : NULL;
    job.row_sums = isa->unary->row_sums;
    double est_ns =
        (double)total * (args->op >= SB_RED_SOFTMAX ? SB_COST_SOFTMAX : SB_COST_REDUCE);
    if (job.inner == 1 && job.n > 0) {          /* along the last axis: row groups */
        /* log_softmax along rows stores e^(x - m) in y and then reads x again
         * for (x - m) - log(s): when y overlaps x (in place), x is read from
         * a copy. Every other form reads each x before writing y there. */
        float *copy = NULL;
        size_t bytes = total * sizeof(float);
        if (args->op == SB_RED_LOG_SOFTMAX && (const char *)job.x < (const char *)job.y + bytes &&
            (const char *)job.y < (const char *)job.x + bytes) {
            copy = malloc(bytes);
            if (!copy) return SB_ERR_NO_MEMORY;
            memcpy(copy, job.x, bytes);
            job.x = copy;
        }
        job.plan = sb_plan_step(job.outer, ROWS, est_ns);
        sb_run_step(&job.plan, args->max_threads, rows_chunk, &job);
        free(copy);
        return SB_OK;
    }
    job.blocks = (job.inner + BLOCK - 1) / BLOCK;   /* one unit: a column block of one o */
    job.plan = sb_plan_step(job.outer * job.blocks, 1, est_ns);
    sb_run_step(&job.plan, args->max_threads, reduce_chunk, &job);
    return SB_OK;
}
