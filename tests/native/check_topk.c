/* The TopK kernel (csrc/kernels/topk.c) called without a graph, against a
 * plain selection written here from docs/onnx.md's definition: for each
 * line, repeatedly the best remaining element (the largest, or the
 * smallest), the lower index among equals, where NaN ranks above every
 * number and -0 equals +0. float32 with special values, int8, int32, uint8
 * and uint64 lines of 1..40 elements, k from 0 to the line, inner strides
 * 1..3, both directions. Exit status 0 only if every case matched. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/topk.h"

static uint32_t state = 2024;
static uint32_t next(void) { state = state * 1664525u + 1013904223u; return state >> 8; }

/* -1, 0, 1: a before b, equal, after, in the element's order (NaN largest). */
static int order(const void *x, int kind, int size, int64_t a, int64_t b)
{
    const unsigned char *p = x;
    if (kind == SB_TOPK_FLOAT32) {
        float u, v;
        memcpy(&u, p + a * 4, 4);
        memcpy(&v, p + b * 4, 4);
        int nu = u != u, nv = v != v;
        if (nu || nv) return nu == nv ? 0 : nu ? 1 : -1;
        return u < v ? -1 : u > v;
    }
    if (kind == SB_TOPK_SIGNED) {
        int64_t u = 0, v = 0;
        if (size == 1) u = (int8_t)p[a], v = (int8_t)p[b];
        else { int32_t s, t; memcpy(&s, p + a * 4, 4); memcpy(&t, p + b * 4, 4); u = s, v = t; }
        return u < v ? -1 : u > v;
    }
    uint64_t u = 0, v = 0;
    if (size == 1) u = p[a], v = p[b];
    else { memcpy(&u, p + a * 8, 8); memcpy(&v, p + b * 8, 8); }
    return u < v ? -1 : u > v;
}

static int check(int kind, int size, int64_t outer, int64_t n, int64_t inner, int64_t k,
                 int largest)
{
    int64_t total = outer * n * inner;
    unsigned char *x = malloc((size_t)(total * size + 1));
    unsigned char *vals = malloc((size_t)(outer * k * inner * size + 1));
    int64_t *inds = malloc((size_t)(outer * k * inner + 1) * sizeof *inds);
    sb_topk_entry *scratch = malloc((size_t)(n + 1) * sizeof *scratch);
    unsigned char *taken = malloc((size_t)n + 1);
    static const float specials[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-45f, -1e-45f, 1.0f};
    for (int64_t i = 0; i < total; ++i) {
        if (kind == SB_TOPK_FLOAT32) {
            float v = next() % 4 == 0 ? specials[next() % 9] : (float)((int)(next() % 9) - 4) * 0.5f;
            memcpy(x + i * 4, &v, 4);
        } else {
            for (int b = 0; b < size; ++b) x[i * size + b] = (unsigned char)(next() % 3 == 0 ? 0x80 : next());
        }
    }
    sb_topk(x, kind, size, outer, n, inner, k, largest, vals, inds, scratch);
    int ok = 1;
    for (int64_t o = 0; o < outer && ok; ++o)
        for (int64_t i = 0; i < inner && ok; ++i) {
            int64_t base = o * n * inner + i;
            memset(taken, 0, (size_t)n);
            for (int64_t slot = 0; slot < k && ok; ++slot) {
                int64_t best = -1;
                for (int64_t j = 0; j < n; ++j) {
                    if (taken[j]) continue;
                    if (best < 0) { best = j; continue; }
                    int c = order(x, kind, size, base + j * inner, base + best * inner);
                    if (largest ? c > 0 : c < 0) best = j;
                }
                taken[best] = 1;
                int64_t at = (o * k + slot) * inner + i;
                ok = inds[at] == best &&
                     memcmp(vals + at * size, x + (base + best * inner) * size, (size_t)size) == 0;
            }
        }
    if (!ok)
        printf("FAIL kind %d size %d outer %lld n %lld inner %lld k %lld largest %d\n", kind, size,
               (long long)outer, (long long)n, (long long)inner, (long long)k, largest);
    free(x), free(vals), free(inds), free(scratch), free(taken);
    return ok;
}

int main(void)
{
    static const struct { int kind, size; } types[] = {
        {SB_TOPK_FLOAT32, 4}, {SB_TOPK_SIGNED, 1}, {SB_TOPK_SIGNED, 4}, {SB_TOPK_UNSIGNED, 1},
        {SB_TOPK_UNSIGNED, 8},
    };
    int cases = 0, failed = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t)
        for (int64_t n = 1; n <= 40; n += 3)
            for (int64_t inner = 1; inner <= 3; ++inner)
                for (int largest = 0; largest <= 1; ++largest) {
                    int64_t k = (int64_t)(next() % (uint32_t)(n + 1));
                    failed += !check(types[t].kind, types[t].size, 2, n, inner, k, largest);
                    ++cases;
                }
    printf("topk cases %d failed %d\n", cases, failed);
    return failed ? 1 : 0;
}
