/* A C-only check of the depthwise convolution on every path the build target
 * runs, for targets where the Python package cannot run (arm64 under
 * qemu-user): exact mode bit-identical to sb_conv2d_naive_argv at 1 and 3
 * threads, fast mode identical at 1 and 3 threads, over fixed pseudo-random
 * shapes (kernels 1..7, strides 1..3, dilation 1..2, asymmetric padding,
 * channel multipliers 1..3, bias, relu/relu6, special values, rows wide
 * enough for whole vector blocks and planes big enough to be cut in bands).
 * Prints one FNV-1a digest of all exact outputs, which must be equal on every
 * path and target. Exit status 0 only if every check passed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "samebits.h"

static unsigned long long fnv1a(unsigned long long h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static uint32_t state = 12345;
static size_t pick(size_t lo, size_t hi)   /* lo .. hi inclusive */
{
    state = state * 1664525u + 1013904223u;
    return lo + (size_t)((state >> 8) % (uint32_t)(hi - lo + 1));
}

typedef struct {
    size_t n, c, mult, h, w, kh, kw, sh, sw, dh, dw, pad[4];
    int act, bias;
} dw_case;

#define CASES 200

static void make_case(int i, dw_case *k)
{
    k->n = pick(1, 2), k->c = pick(2, 5), k->mult = pick(1, 3);
    k->kh = pick(1, 7), k->kw = pick(1, 7), k->sh = pick(1, 3), k->sw = pick(1, 3);
    k->dh = pick(1, 2), k->dw = pick(1, 2);
    for (int j = 0; j < 4; ++j) k->pad[j] = pick(0, 3);
    size_t reach_h = k->dh * (k->kh - 1) + 1, reach_w = k->dw * (k->kw - 1) + 1;
    size_t min_h = reach_h > k->pad[0] + k->pad[1] ? reach_h - k->pad[0] - k->pad[1] : 1;
    size_t min_w = reach_w > k->pad[2] + k->pad[3] ? reach_w - k->pad[2] - k->pad[3] : 1;
    k->h = (min_h ? min_h : 1) + pick(0, 14);
    k->w = (min_w ? min_w : 1) + pick(0, 14);
    if (i % 5 == 4) k->w += pick(100, 400);                  /* whole vector blocks */
    if (i % 20 == 19) k->n = 1, k->c = 2, k->h = 200 + pick(0, 50), k->w = 150;  /* bands */
    k->act = (int)pick(0, 2), k->bias = (int)pick(0, 1);
}

static size_t out_size(size_t size, size_t before, size_t after, size_t k, size_t dil,
                       size_t stride)
{
    return (size + before + after - dil * (k - 1) - 1) / stride + 1;
}

static void fill_args(int64_t *a, const dw_case *k, int path, int mode, int threads,
                      const float *x, const float *w, const float *bias, float *y)
{
    int64_t v[SB_CONV_NARGS] = {
        path, mode, threads, (int64_t)k->n, (int64_t)k->c, (int64_t)k->h, (int64_t)k->w,
        (int64_t)(k->c * k->mult), (int64_t)k->kh, (int64_t)k->kw, (int64_t)k->c,
        (int64_t)k->sh, (int64_t)k->sw, (int64_t)k->dh, (int64_t)k->dw,
        (int64_t)k->pad[0], (int64_t)k->pad[1], (int64_t)k->pad[2], (int64_t)k->pad[3],
        (int64_t)(intptr_t)x, (int64_t)(intptr_t)w, 0, (int64_t)(intptr_t)bias, k->act,
        (int64_t)(intptr_t)y};
    memcpy(a, v, sizeof v);
}

int main(void)
{
    int failures = 0, checked_paths = 0;
    unsigned long long digest = 0;
    for (int path = 0; path < sb_path_count(); ++path) {
        if (!sb_path_supported(path)) continue;
        ++checked_paths;
        unsigned long long path_digest = 1469598103934665603ull;
        state = 12345;
        for (int i = 0; i < CASES; ++i) {
            dw_case k;
            make_case(i, &k);
            size_t cout = k.c * k.mult;
            size_t oh = out_size(k.h, k.pad[0], k.pad[1], k.kh, k.dh, k.sh);
            size_t ow = out_size(k.w, k.pad[2], k.pad[3], k.kw, k.dw, k.sw);
            size_t nx = k.n * k.c * k.h * k.w, nw = cout * k.kh * k.kw, ny = k.n * cout * oh * ow;
            float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float));
            float *b = malloc(cout * sizeof(float)), *want = malloc(ny * sizeof(float));
            float *got = malloc(ny * sizeof(float)), *got3 = malloc(ny * sizeof(float));
            if (!x || !w || !b || !want || !got || !got3) return 2;
            sb_fill_test_values(x, nx, (uint32_t)(100 + i), i % 3 == 0 ? 16 : 0);
            sb_fill_test_values(w, nw, (uint32_t)(200 + i), i % 3 == 0 ? 4 : 0);
            sb_fill_test_values(b, cout, (uint32_t)(300 + i), 0);
            const float *bias = k.bias ? b : NULL;
            int64_t args[SB_CONV_NARGS];
            fill_args(args, &k, path, SB_MODE_EXACT, 1, x, w, bias, want);
            int s0 = sb_conv2d_naive_argv(args);
            fill_args(args, &k, path, SB_MODE_EXACT, 1, x, w, bias, got);
            int s1 = sb_conv2d_argv(args);
            fill_args(args, &k, path, SB_MODE_EXACT, 3, x, w, bias, got3);
            int s3 = sb_conv2d_argv(args);
            if (s0 || s1 || s3 || memcmp(got, want, ny * sizeof(float)) ||
                memcmp(got3, want, ny * sizeof(float))) {
                if (failures++ < 10)
                    printf("FAIL exact path=%s case %d (status %d %d %d)\n", sb_path_name(path),
                           i, s0, s1, s3);
            }
            path_digest = fnv1a(path_digest, got, ny * sizeof(float));
            fill_args(args, &k, path, SB_MODE_FAST, 1, x, w, bias, got);
            s1 = sb_conv2d_argv(args);
            fill_args(args, &k, path, SB_MODE_FAST, 3, x, w, bias, got3);
            s3 = sb_conv2d_argv(args);
            if (s1 || s3 || memcmp(got, got3, ny * sizeof(float))) {
                if (failures++ < 10)
                    printf("FAIL fast threads path=%s case %d\n", sb_path_name(path), i);
            }
            free(x), free(w), free(b), free(want), free(got), free(got3);
        }
        printf("path %s depthwise-digest %016llx\n", sb_path_name(path), path_digest);
        if (checked_paths == 1) digest = path_digest;
        else if (path_digest != digest) {
            printf("FAIL path %s digest differs\n", sb_path_name(path));
            ++failures;
        }
    }
    printf("depthwise-digest %016llx paths %d failures %d\n", digest, checked_paths, failures);
    return failures ? 1 : 0;
}
