/* A C-only check of the elementwise functions and activations on every path the build
 * target runs (arm64 under qemu-user included): every supported path gives
 * the scalar path's bits for each function, in exact mode, at 1 and 3
 * threads, over every 4099th float32 bit pattern (1 in 4099: all exponents,
 * both signs, NaNs and subnormals) and the portable test values. Prints one
 * FNV-1a digest per function, which must be equal on every target. Exit
 * status 0 only if every check passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "samebits.h"

#define OPS 21   /* every enum sb_unary_op code, in order */
static const char *const NAMES[OPS] = {"exp", "log", "tanh", "erf", "sigmoid", "relu", "relu6",
                                       "leaky_relu", "gelu", "gelu_tanh", "silu", "hardswish",
                                       "hardsigmoid", "sqrt", "hardswish_onnx",
                                       "hardsigmoid_onnx", "elu", "softplus", "mish", "sin",
                                       "cos"};

static unsigned long long fnv1a(unsigned long long h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static int run(int path, int op, int threads, const float *x, float *y, size_t n)
{
    sb_unary_args args = {.path = path, .mode = SB_MODE_EXACT, .op = op,
                          .max_threads = threads, .count = (int64_t)n,
                          .x = (int64_t)(intptr_t)x, .y = (int64_t)(intptr_t)y,
                          /* leaky_relu: slope 0.01; onnx hardsigmoid: alpha 0.2; elu: alpha 1 */
                          .param = op == 7 ? 0x3C23D70A : op == 15 ? 0x3E4CCCCD
                                   : op == 16 ? 0x3F800000 : 0};
    return sb_unary(&args);
}

int main(void)
{
    const size_t sweep = (size_t)(((uint64_t)1 << 32) / 4099) + 1, extra = 50000;
    const size_t n = sweep + extra;
    float *x = malloc(n * sizeof(float)), *want = malloc(n * sizeof(float));
    float *got = malloc(n * sizeof(float));
    if (!x || !want || !got) return 2;
    for (size_t i = 0; i < sweep; ++i) {
        uint32_t u = (uint32_t)((uint64_t)i * 4099u);
        memcpy(&x[i], &u, 4);
    }
    sb_fill_test_values(x + sweep, extra, 21, 500);
    int failures = 0;
    for (int op = 0; op < OPS; ++op) {
        if (run(0, op, 1, x, want, n) != SB_OK) return 3;       /* the scalar path */
        for (int path = 1; path < sb_path_count(); ++path) {
            if (!sb_path_supported(path)) continue;
            for (int threads = 1; threads <= 3; threads += 2) {
                memset(got, 0xAB, n * sizeof(float));
                if (run(path, op, threads, x, got, n) != SB_OK) return 3;
                if (memcmp(got, want, n * sizeof(float)) != 0) {
                    ++failures;
                    printf("FAIL %s path=%s threads=%d differs from scalar\n", NAMES[op],
                           sb_path_name(path), threads);
                }
            }
            printf("path %s %s checked\n", sb_path_name(path), NAMES[op]);
        }
        printf("%s-digest %016llx\n", NAMES[op], fnv1a(1469598103934665603ull, want,
                                                        n * sizeof(float)));
    }
    printf("failures %d\n", failures);
    free(x), free(want), free(got);
    return failures ? 1 : 0;
}
