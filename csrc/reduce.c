/* sb_reduce: reductions and normalizations over one axis of a C-contiguous
 * float32 tensor seen as (outer, n, inner): the axis is n, element (o, j, i)
 * at x[(o * n + j) * inner + i]. docs/exact-ops.md ("Reductions") defines
 * each in a fixed order: every sum runs over j = 0, 1, ..., n-1 from +0, one
 * float32 add per term, whatever the layout, the vector width (lanes hold
 * different i) or the thread count (threads take whole (o, i-block) units). */
#include <stdint.h>
#include <string.h>
#include "samebits.h"
#include "activation.h"
#include "checked.h"
#include "threads.h"

#define BLOCK 256                 /* columns i per unit of work */

enum sb_reduce_op {   /* part of the ABI (_abi.py): never renumber */
    SB_RED_SUM = 0, SB_RED_MEAN = 1, SB_RED_SOFTMAX = 2, SB_RED_LOG_SOFTMAX = 3,
    SB_RED_LAYER_NORM = 4, SB_RED_COUNT
};

typedef struct {
    const sb_reduce_args *args;
    size_t outer, n, inner, blocks;
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
static void softmax_block(const float *x, float *y, size_t n, size_t inner, size_t w, int log_form)
{
    float m[BLOCK], s[BLOCK];
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
        for (size_t i = 0; i < w; ++i) {
            float e = sb_exact_exp(row[i] - m[i]);
            s[i] = s[i] + e;
            if (!log_form) out[i] = e;
        }
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

/* Layer normalization of one row of n values (inner is 1). */
static void layer_norm_row(const float *x, float *y, size_t n, const float *weight,
                           const float *bias, float eps)
{
    float count = (float)n;
    float sum = 0.0f;
    for (size_t j = 0; j < n; ++j) sum = sum + x[j];
    float mean = sum / count;
    float sq = 0.0f;
    for (size_t j = 0; j < n; ++j) {
        float d = x[j] - mean;
        sq = sq + d * d;
    }
    float var = sq / count;
    float r = 1.0f / __builtin_sqrtf(var + eps);
    for (size_t j = 0; j < n; ++j) {
        float v = (x[j] - mean) * r;
        if (weight) v = v * weight[j];
        if (bias) v = v + bias[j];
        y[j] = sbt_canonical(v);
    }
}

static void reduce_unit(void *ctx, size_t unit, int thread_index)
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
    } else if (op == SB_RED_LAYER_NORM) {
        layer_norm_row(x, job->y + o * job->n, job->n, job->weight, job->bias, job->eps);
    } else {
        softmax_block(x, job->y + o * job->n * job->inner + i0, job->n, job->inner, w,
                      op == SB_RED_LOG_SOFTMAX);
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
    job.blocks = (job.inner + BLOCK - 1) / BLOCK;
    size_t units = job.outer * job.blocks;
    int max_threads = args->max_threads > 1024 ? 1024 : (int)args->max_threads;
    double per_element = args->op >= SB_RED_SOFTMAX ? 3.0 : 0.5;
    int threads = sb_threads_for_work(max_threads, (double)total * per_element, units);
    sb_parallel_run(threads, units, reduce_unit, &job);
    return SB_OK;
}
