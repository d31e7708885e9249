/* Every float32 input of an exact elementwise function through the library
 * (sb_unary, exact mode, one path) against the written recipe (sb_exact_sin,
 * sb_exact_cos of csrc/math/trig.h, sb_exact_erf of transcendental.h,
 * sb_act_gelu of activation.h, compiled here as scalar code): a path's own
 * route (the sin and cos fast route, avx512's Erf and Gelu) must give the
 * recipe's bits for all 2^32 inputs, NaNs included (the canonical NaN).
 *
 * Usage: exhaustive_identical FUNCTION PATHS THREADS   (FUNCTION one of
 * sin, cos, erf, gelu, exp, log, tanh, sigmoid, hardswish_onnx (the recipe:
 * HardSigmoid then the product, as ONNX writes it); PATHS a comma-separated
 * list: the recipe is computed once for all)
 * Prints "FUNCTION PATH inputs N differ D" and the first differing inputs
 * per path; exits 1 when any differs. Built and run by bench/exhaustive_identical.py.
 * Build it with -ffp-contract=off (the recipe's binary64 steps must not be
 * fused). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "math/activation.h"
#include "math/trig.h"
#include "samebits.h"

typedef float (*recipe_fn)(float);

/* ONNX's HardSwish as the documentation writes it, x * HardSigmoid(x) with
 * alpha = float32(1/6) and beta = 0.5, HardSigmoid's canonical NaN
 * included: the recipe sb_act_hardswish_onnx's shorter form must match. */
static float hardswish_onnx_composed(float x)
{
    return sbt_canonical(x * sb_act_hardsigmoid_onnx(x, SB_ONNX_ONE_SIXTH, 0.5f));
}

static const struct { const char *name; int op; recipe_fn recipe; } functions[] = {
    {"sin", SB_OP_SIN, sb_exact_sin}, {"cos", SB_OP_COS, sb_exact_cos},
    {"erf", SB_OP_ERF, sb_exact_erf}, {"gelu", SB_OP_GELU, sb_act_gelu},
    {"exp", SB_OP_EXP, sb_exact_exp}, {"log", SB_OP_LOG, sb_exact_log},
    {"tanh", SB_OP_TANH, sb_exact_tanh}, {"sigmoid", SB_OP_SIGMOID, sb_exact_sigmoid},
    {"hardswish_onnx", SB_OP_HARDSWISH_ONNX, hardswish_onnx_composed},
};

#define BLOCK (1u << 20)
#define MAX_PATHS 8
static int op, paths, path[MAX_PATHS];
static recipe_fn recipe;
static const char *path_name[MAX_PATHS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_block;               /* of 4096 */
static uint64_t differ[MAX_PATHS];
static uint32_t first[MAX_PATHS][8];

static void *worker(void *arg)
{
    (void)arg;
    float *x = malloc(BLOCK * sizeof(float)), *y = malloc(BLOCK * sizeof(float));
    float *want = malloc(BLOCK * sizeof(float));
    if (!x || !y || !want) exit(2);
    for (;;) {
        pthread_mutex_lock(&lock);
        uint32_t block = next_block++;
        pthread_mutex_unlock(&lock);
        if (block >= 4096) break;
        for (uint32_t i = 0; i < BLOCK; ++i) {
            x[i] = sbt_float(block * BLOCK + i);
            want[i] = recipe(x[i]);
        }
        for (int k = 0; k < paths; ++k) {
            sb_unary_args args = {.path = path[k], .mode = SB_MODE_EXACT, .op = op, .max_threads = 1,
                                  .count = BLOCK, .x = (int64_t)(intptr_t)x,
                                  .y = (int64_t)(intptr_t)y};
            if (sb_unary(&args) != SB_OK) exit(3);
            uint64_t local = 0;
            uint32_t bad[8];
            for (uint32_t i = 0; i < BLOCK; ++i)
                if (sbt_bits32(want[i]) != sbt_bits32(y[i]) && local++ < 8) bad[local - 1] = block * BLOCK + i;
            if (local) {
                pthread_mutex_lock(&lock);
                for (uint64_t j = 0; j < local && j < 8 && differ[k] + j < 8; ++j)
                    first[k][differ[k] + j] = bad[j];
                differ[k] += local;
                pthread_mutex_unlock(&lock);
            }
        }
    }
    free(want);
    free(x), free(y);
    return NULL;
}

int main(int argc, char **argv)
{
    for (size_t f = 0; argc == 4 && f < sizeof functions / sizeof functions[0]; ++f)
        if (!strcmp(argv[1], functions[f].name)) op = functions[f].op, recipe = functions[f].recipe;
    if (!recipe) {
        fprintf(stderr, "usage: %s sin|cos|erf|gelu|exp|log|tanh|sigmoid|hardswish_onnx PATHS THREADS\n", argv[0]);
        return 2;
    }
    char list[256];
    snprintf(list, sizeof list, "%s", argv[2]);
    for (char *name = strtok(list, ","); name && paths < MAX_PATHS; name = strtok(NULL, ",")) {
        int found = -1;
        for (int p = 0; p < sb_path_count(); ++p)
            if (!strcmp(sb_path_name(p), name)) found = p;
        if (found < 0 || !sb_path_supported(found)) {
            printf("path %s not supported here\n", name);
            return 77;
        }
        path_name[paths] = sb_path_name(found);
        path[paths++] = found;
    }
    int threads = atoi(argv[3]);
    if (threads < 1 || threads > 64) return 2;
    pthread_t t[64];
    for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    int any = 0;
    for (int k = 0; k < paths; ++k) {
        printf("%s %s inputs 4294967296 differ %llu", argv[1], path_name[k], (unsigned long long)differ[k]);
        for (uint64_t j = 0; j < differ[k] && j < 8; ++j) printf(" %08x", first[k][j]);
        printf("\n");
        any |= differ[k] != 0;
    }
    return any;
}
