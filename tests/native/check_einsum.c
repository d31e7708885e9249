/* The Einsum contraction kernel (csrc/kernels/einsum.c) called without a
 * graph, against the definition written here from docs/onnx.md: y at each
 * output position is the product P[t][i][j] = sum over p of
 * A(t, i, p) * B(t, p, j), one accumulator from +0 in increasing p, each
 * product and each sum rounded on its own (NaN stored as 0x7FC00000), where
 * A and B read the operands at the call's shapes and strides (0 repeats a
 * broadcast dimension) and y reads P at the call's output strides. Cases:
 * batched, broadcast, transposed output (so the product is staged), empty
 * sums (k = 0), special values, every path at 1 and 3 threads in exact mode.
 * Exit status 0 only if every case matched. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "samebits.h"
#include "kernels/einsum.h"
#include "framework/memory.h"

static uint32_t state = 7;
static uint32_t next(void) { state = state * 1664525u + 1013904223u; return state >> 8; }

static float value(void)
{
    static const float special[] = {0.0f, -0.0f, 1e-40f, -1e-40f, 3.0e38f, -3.0e38f};
    uint32_t r = next() % 64;
    if (r < 6) return special[r];
    return (float)((int)(next() % 2001) - 1000) / 128.0f;
}

static float canonical(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    if ((bits & 0x7fffffffu) > 0x7f800000u) bits = 0x7fc00000u;
    memcpy(&v, &bits, 4);
    return v;
}

/* The element offset of flat index `at` of a (rank, shape) walk at strides. */
static int64_t offset(int rank, const int64_t *shape, const int64_t *strides, int64_t at)
{
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
        off += (at % shape[d]) * strides[d];
        at /= shape[d];
    }
    return off;
}

static void definition(const sb_einsum_call *c, const float *a, const float *b, float *y)
{
    int64_t count = c->nb * c->m * c->n;
    float *p = malloc((size_t)(count ? count : 1) * 4);
    for (int64_t t = 0; t < c->nb; ++t)
        for (int64_t i = 0; i < c->m; ++i)
            for (int64_t j = 0; j < c->n; ++j) {
                volatile float acc = 0.0f;
                for (int64_t q = 0; q < c->k; ++q) {
                    float x = a[offset(c->a_rank, c->a_shape, c->a_strides, (t * c->m + i) * c->k + q)];
                    float w = b[offset(c->b_rank, c->b_shape, c->b_strides, (t * c->k + q) * c->n + j)];
                    volatile float prod = x * w;
                    acc = acc + prod;
                }
                p[(t * c->m + i) * c->n + j] = canonical(acc);
            }
    for (int64_t at = 0; at < count; ++at)
        y[at] = c->product_is_y ? p[at] : p[offset(c->y_rank, c->y_shape, c->y_strides, at)];
    free(p);
}

/* One case: "btk,bkn->?" shapes with optional broadcast of a's batch and a
 * transposed output (n, b, m). */
static void make_case(int index, sb_einsum_call *c, int64_t *a_len, int64_t *b_len)
{
    memset(c, 0, sizeof *c);
    int64_t nb = 1 + next() % 3, m = 1 + next() % 9, k = index % 7 == 0 ? 0 : 1 + next() % 40;
    int64_t n = 1 + next() % 11;
    int broadcast = index % 3 == 1, transpose = index % 2 == 1;
    c->nb = nb, c->m = m, c->k = k, c->n = n;
    /* a: (nb or 1, m, k) dense, read in (b, m, k) order; broadcast: stride 0 */
    c->a_rank = 3;
    c->a_shape[0] = nb, c->a_shape[1] = m, c->a_shape[2] = k;
    c->a_strides[0] = broadcast ? 0 : m * k, c->a_strides[1] = k, c->a_strides[2] = 1;
    *a_len = (broadcast ? 1 : nb) * m * k;
    /* b: stored (n, nb, k), read in (b, k, n) order */
    c->b_rank = 3;
    c->b_shape[0] = nb, c->b_shape[1] = k, c->b_shape[2] = n;
    c->b_strides[0] = k, c->b_strides[1] = 1, c->b_strides[2] = nb * k;
    *b_len = n * nb * k;
    c->y_rank = 3;
    if (transpose) {   /* y (n, b, m) from P (b, m, n) */
        c->y_shape[0] = n, c->y_shape[1] = nb, c->y_shape[2] = m;
        c->y_strides[0] = 1, c->y_strides[1] = m * n, c->y_strides[2] = n;
    } else {
        c->y_shape[0] = nb, c->y_shape[1] = m, c->y_shape[2] = n;
        c->y_strides[0] = m * n, c->y_strides[1] = n, c->y_strides[2] = 1;
        c->product_is_y = 1;
    }
}

int main(void)
{
    int cases = 0, failed = 0;
    for (int i = 0; i < 60; ++i) {
        sb_einsum_call c;
        int64_t a_len, b_len;
        make_case(i, &c, &a_len, &b_len);
        int64_t y_len = c.nb * c.m * c.n;
        float *a = malloc((size_t)(a_len + 1) * 4), *b = malloc((size_t)(b_len + 1) * 4);
        float *want = malloc((size_t)y_len * 4), *got = malloc((size_t)y_len * 4);
        void *scratch = sb_alloc_aligned((size_t)sb_einsum_scratch_bytes(&c) + 64);
        for (int64_t t = 0; t < a_len; ++t) a[t] = value();
        for (int64_t t = 0; t < b_len; ++t) b[t] = value();
        definition(&c, a, b, want);
        for (int path = 0; path < sb_path_count(); ++path) {
            if (!sb_path_supported(path)) continue;
            for (int threads = 1; threads <= 3; threads += 2) {
                ++cases;
                memset(got, 0xAB, (size_t)y_len * 4);
                int status = sb_einsum_run(&c, path, SB_MODE_EXACT, threads, a, b, got, scratch);
                if (status || memcmp(got, want, (size_t)y_len * 4)) {
                    ++failed;
                    printf("FAIL case %d path %s threads %d (status %d)\n", i, sb_path_name(path),
                           threads, status);
                }
            }
        }
        free(a), free(b), free(want), free(got);
        sb_free_aligned(scratch);
    }
    printf("cases %d failed %d\n", cases, failed);
    return failed != 0;
}
