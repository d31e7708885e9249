/* A C-only check of the convolution kernels that have per-path code of their
 * own, on every path the build target runs, for targets where the Python
 * package cannot run (arm64 under qemu-user): the depthwise kernel and the
 * few-column kernel of layers with output maps of at most 8 positions. Exact mode must be
 * bit-identical to sb_conv2d_naive at 1 and 3 threads, from plain and
 * from packed weights; fast mode identical at 1 and 3 threads. Depthwise
 * cases: fixed pseudo-random shapes (kernels 1..7, strides 1..3, dilation
 * 1..2, asymmetric padding, channel multipliers 1..3, bias, relu/relu6,
 * special values, rows wide enough for whole vector blocks, planes big enough
 * to be cut in bands). Few-column cases: 1..3 images, 1..600 input and
 * 1..300 output channels, 1 or 2 groups; 1x1 layers over 1x1 inputs, 1-D
 * layers of 1..8 outputs (kernels 1..3, strides 1..2, padding 0..1) and 3x3
 * stride-2 layers over 3x3 or 4x4 inputs (2x2 outputs). Prints one FNV-1a digest of all
 * exact outputs, which must be equal on every path and target. Exit status 0
 * only if every check passed. */
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
    size_t n, c, cout, groups, h, w, kh, kw, sh, sw, dh, dw, pad[4];
    int act, bias;
} conv_case;

#define DEPTHWISE_CASES 200
#define FEW_COLUMN_CASES 60

static void make_depthwise_case(int i, conv_case *k)
{
    k->n = pick(1, 2), k->c = pick(2, 5);
    k->cout = k->c * pick(1, 3), k->groups = k->c;
    k->kh = pick(1, 7), k->kw = pick(1, 7), k->sh = pick(1, 3), k->sw = pick(1, 3);
    k->dh = pick(1, 2), k->dw = pick(1, 2);
    for (int j = 0; j < 4; ++j) k->pad[j] = pick(0, 3);
    size_t reach_h = k->dh * (k->kh - 1) + 1, reach_w = k->dw * (k->kw - 1) + 1;
    size_t min_h = reach_h > k->pad[0] + k->pad[1] ? reach_h - k->pad[0] - k->pad[1] : 1;
    size_t min_w = reach_w > k->pad[2] + k->pad[3] ? reach_w - k->pad[2] - k->pad[3] : 1;
    k->h = (min_h ? min_h : 1) + pick(0, 14);
    k->w = (min_w ? min_w : 1) + pick(0, 14);
    if (i % 5 == 4) k->w += pick(100, 400);                  /* whole vector blocks */
    if (i % 20 == 19) k->n = 1, k->c = 2, k->cout = 2 * (k->cout / k->groups), k->groups = 2,
                      k->h = 200 + pick(0, 50), k->w = 150;  /* bands */
    k->act = (int)pick(0, 2), k->bias = (int)pick(0, 1);
}

static void make_few_column_case(conv_case *k)
{
    memset(k, 0, sizeof *k);
    k->groups = pick(1, 2);
    k->n = pick(1, 3), k->c = k->groups * pick(1, 300), k->cout = k->groups * pick(1, 150);
    k->h = k->w = k->kh = k->kw = k->sh = k->sw = k->dh = k->dw = 1;
    switch (pick(0, 2)) {
    case 0: break;   /* 1x1 over a 1x1 input */
    case 1: {        /* 1-D: ow outputs */
        size_t ow = pick(1, 8), pad = pick(0, 1);
        k->kw = pick(1, 3), k->sw = pick(1, 2);
        if ((ow - 1) * k->sw + k->kw <= 2 * pad) pad = 0;
        k->w = (ow - 1) * k->sw + k->kw - 2 * pad, k->pad[2] = k->pad[3] = pad;
        break;
    }
    default:         /* 3x3, stride 2, padding 1 over 3x3 or 4x4: 2x2 outputs */
        k->h = k->w = pick(3, 4), k->kh = k->kw = 3, k->sh = k->sw = 2;
        k->pad[0] = k->pad[1] = k->pad[2] = k->pad[3] = 1;
    }
    k->act = (int)pick(0, 2), k->bias = (int)pick(0, 1);
}

static size_t out_size(size_t size, size_t before, size_t after, size_t k, size_t dil,
                       size_t stride)
{
    return (size + before + after - dil * (k - 1) - 1) / stride + 1;
}

static void fill_args(sb_conv2d_args *a, const conv_case *k, int path, int mode, int threads,
                      const float *x, const float *w, const void *packed, const float *bias,
                      float *y)
{
    sb_conv2d_args v = {
        .path = path, .mode = mode, .max_threads = threads, .n = (int64_t)k->n,
        .c = (int64_t)k->c, .h = (int64_t)k->h, .w = (int64_t)k->w, .cout = (int64_t)k->cout,
        .kh = (int64_t)k->kh, .kw = (int64_t)k->kw, .groups = (int64_t)k->groups,
        .stride_h = (int64_t)k->sh, .stride_w = (int64_t)k->sw, .dil_h = (int64_t)k->dh,
        .dil_w = (int64_t)k->dw, .pad_top = (int64_t)k->pad[0], .pad_bottom = (int64_t)k->pad[1],
        .pad_left = (int64_t)k->pad[2], .pad_right = (int64_t)k->pad[3],
        .x = (int64_t)(intptr_t)x, .weights = (int64_t)(intptr_t)(packed ? packed : (const void *)w),
        .packed = packed != NULL, .bias = (int64_t)(intptr_t)bias, .activation = k->act,
        .y = (int64_t)(intptr_t)y};
    *a = v;
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
        for (int i = 0; i < DEPTHWISE_CASES + FEW_COLUMN_CASES; ++i) {
            conv_case k;
            if (i < DEPTHWISE_CASES) make_depthwise_case(i, &k);
            else make_few_column_case(&k);
            size_t oh = out_size(k.h, k.pad[0], k.pad[1], k.kh, k.dh, k.sh);
            size_t ow = out_size(k.w, k.pad[2], k.pad[3], k.kw, k.dw, k.sw);
            size_t cin_g = k.c / k.groups;
            size_t nx = k.n * k.c * k.h * k.w, nw = k.cout * cin_g * k.kh * k.kw;
            size_t ny = k.n * k.cout * oh * ow;
            size_t packed_bytes = sb_conv2d_packed_bytes(path, k.cout, cin_g, k.kh, k.kw, k.groups);
            float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float));
            float *b = malloc(k.cout * sizeof(float)), *want = malloc(ny * sizeof(float));
            float *got = malloc(ny * sizeof(float)), *got3 = malloc(ny * sizeof(float));
            float *packed = malloc(packed_bytes + sizeof(float));
            if (!x || !w || !b || !want || !got || !got3 || !packed) return 2;
            sb_fill_test_values(x, nx, (uint32_t)(100 + i), i % 3 == 0 ? 16 : 0);
            sb_fill_test_values(w, nw, (uint32_t)(200 + i), i % 3 == 0 ? 4 : 0);
            sb_fill_test_values(b, k.cout, (uint32_t)(300 + i), 0);
            int sp = sb_conv2d_pack(path, k.cout, cin_g, k.kh, k.kw, k.groups, w, packed,
                                    packed_bytes);
            const float *bias = k.bias ? b : NULL;
            sb_conv2d_args args;
            fill_args(&args, &k, path, SB_MODE_EXACT, 1, x, w, NULL, bias, want);
            int s0 = sb_conv2d_naive(&args);
            fill_args(&args, &k, path, SB_MODE_EXACT, 1, x, w, NULL, bias, got);
            int s1 = sb_conv2d(&args);
            fill_args(&args, &k, path, SB_MODE_EXACT, 3, x, NULL, packed, bias, got3);
            int s3 = sb_conv2d(&args);
            if (sp || s0 || s1 || s3 || memcmp(got, want, ny * sizeof(float)) ||
                memcmp(got3, want, ny * sizeof(float))) {
                if (failures++ < 10)
                    printf("FAIL exact path=%s case %d (status %d %d %d %d)\n",
                           sb_path_name(path), i, sp, s0, s1, s3);
            }
            path_digest = fnv1a(path_digest, got, ny * sizeof(float));
            fill_args(&args, &k, path, SB_MODE_FAST, 1, x, w, NULL, bias, got);
            s1 = sb_conv2d(&args);
            fill_args(&args, &k, path, SB_MODE_FAST, 3, x, NULL, packed, bias, got3);
            s3 = sb_conv2d(&args);
            if (s1 || s3 || memcmp(got, got3, ny * sizeof(float))) {
                if (failures++ < 10)
                    printf("FAIL fast packed/threads path=%s case %d\n", sb_path_name(path), i);
            }
            free(x), free(w), free(b), free(want), free(got), free(got3), free(packed);
        }
        printf("path %s conv-digest %016llx\n", sb_path_name(path), path_digest);
        if (checked_paths == 1) digest = path_digest;
        else if (path_digest != digest) {
            printf("FAIL path %s digest differs\n", sb_path_name(path));
            ++failures;
        }
    }
    printf("conv-digest %016llx paths %d failures %d\n", digest, checked_paths, failures);
    return failures ? 1 : 0;
}
