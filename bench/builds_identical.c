/* Two builds of the library, the same elementwise outputs: every float32
 * input of each named function (sb_unary, one mode) through both, on every
 * path both support, compared bit for bit. For a change meant to keep the
 * bits (a rewritten clamp, another split of 2^k) in fast mode too, whose
 * bits no recipe defines: the old build is the reference.
 *
 * Build: cc -O2 -I csrc bench/builds_identical.c -o /tmp/builds_identical -ldl -Wl,--no-as-needed -lm
 * Usage: /tmp/builds_identical OLD.so NEW.so MODE FUNCTIONS
 *   MODE 0 (fast) or 1 (exact); FUNCTIONS a comma-separated list of
 *   sb_unary's operation names (exp,sigmoid,hardswish_onnx,...).
 * Prints "PATH FUNCTION mode M: D of 2^32 differ" (and the first differing
 * input); exits 1 when any differs. The calls run on two threads; about 10
 * s per function and path on avx512, 3 minutes on scalar (Zen 5, 2 cores). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "samebits.h"

typedef int (*unary_fn)(const sb_unary_args *);
/* Each name beside its code, so that a code added or moved in samebits.h
 * cannot shift the names onto other functions (a code without a name is
 * never run: main skips it). */
static const char *const names[SB_OP_COUNT] = {
    [SB_OP_EXP] = "exp", [SB_OP_LOG] = "log", [SB_OP_TANH] = "tanh", [SB_OP_ERF] = "erf",
    [SB_OP_SIGMOID] = "sigmoid", [SB_OP_RELU] = "relu", [SB_OP_RELU6] = "relu6",
    [SB_OP_LEAKY_RELU] = "leaky_relu", [SB_OP_GELU] = "gelu", [SB_OP_GELU_TANH] = "gelu_tanh",
    [SB_OP_SILU] = "silu", [SB_OP_HARDSWISH] = "hardswish", [SB_OP_HARDSIGMOID] = "hardsigmoid",
    [SB_OP_SQRT] = "sqrt", [SB_OP_HARDSWISH_ONNX] = "hardswish_onnx",
    [SB_OP_HARDSIGMOID_ONNX] = "hardsigmoid_onnx", [SB_OP_ELU] = "elu",
    [SB_OP_SOFTPLUS] = "softplus", [SB_OP_MISH] = "mish", [SB_OP_SIN] = "sin", [SB_OP_COS] = "cos"};

static void *open_library(const char *file)
{
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "dlopen %s: %s\n", file, dlerror()); exit(2); }
    return h;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s OLD.so NEW.so MODE FUNCTIONS\n", argv[0]);
        return 2;
    }
    void *a = open_library(argv[1]), *b = open_library(argv[2]);
    unary_fn ua = (unary_fn)dlsym(a, "sb_unary"), ub = (unary_fn)dlsym(b, "sb_unary");
    int (*path_count)(void) = (int (*)(void))dlsym(a, "sb_path_count");
    int (*supported_a)(int) = (int (*)(int))dlsym(a, "sb_path_supported");
    int (*supported_b)(int) = (int (*)(int))dlsym(b, "sb_path_supported");
    const char *(*path_name)(int) = (const char *(*)(int))dlsym(a, "sb_path_name");
    if (!ua || !ub || !path_count || !supported_a || !supported_b || !path_name) {
        fprintf(stderr, "a library lacks sb_unary or the path functions\n");
        return 2;
    }
    const int mode = atoi(argv[3]);
    char list[1024];
    snprintf(list, sizeof list, ",%s,", argv[4]);
    /* a misspelt name would otherwise compare nothing and pass */
    int listed = 1, known = 0;
    for (const char *c = argv[4]; *c; ++c) listed += *c == ',';
    for (int op = 0; op < SB_OP_COUNT; ++op) {
        char key[40];
        snprintf(key, sizeof key, ",%s,", names[op] ? names[op] : "");
        known += names[op] && strstr(list, key) != NULL;
    }
    if (known != listed) {
        fprintf(stderr, "FUNCTIONS: %d of the %d names are not sb_unary operations\n",
                listed - known, listed);
        return 2;
    }
    const size_t block = (size_t)1 << 22;
    uint32_t *x = malloc(block * 4), *ya = malloc(block * 4), *yb = malloc(block * 4);
    if (!x || !ya || !yb) return 2;
    int any = 0;
    for (int op = 0; op < SB_OP_COUNT; ++op) {
        if (!names[op]) continue;
        char key[40];
        snprintf(key, sizeof key, ",%s,", names[op]);
        if (!strstr(list, key)) continue;
        for (int p = 0; p < path_count(); ++p) {
            if (!supported_a(p) || !supported_b(p)) continue;
            uint64_t differ = 0;
            for (uint64_t base = 0; base < ((uint64_t)1 << 32); base += block) {
                for (size_t i = 0; i < block; ++i) x[i] = (uint32_t)(base + i);
                sb_unary_args args = {.path = p, .mode = mode, .op = op, .max_threads = 2,
                                      .count = (int64_t)block, .x = (int64_t)(intptr_t)x,
                                      .y = (int64_t)(intptr_t)ya};
                if (ua(&args)) { fprintf(stderr, "%s: sb_unary failed\n", argv[1]); return 2; }
                args.y = (int64_t)(intptr_t)yb;
                if (ub(&args)) { fprintf(stderr, "%s: sb_unary failed\n", argv[2]); return 2; }
                for (size_t i = 0; i < block; ++i)
                    if (ya[i] != yb[i] && differ++ == 0)
                        printf("  first: input 0x%08x gives 0x%08x and 0x%08x\n", x[i], ya[i], yb[i]);
            }
            printf("%s %s mode %d: %llu of 2^32 differ\n", path_name(p), names[op], mode,
                   (unsigned long long)differ);
            fflush(stdout);
            any |= differ != 0;
        }
    }
    free(x), free(ya), free(yb);
    return any;
}
