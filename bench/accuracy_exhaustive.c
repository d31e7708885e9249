/* Exhaustive accuracy of one exact elementwise function: every float32 input
 * (NaNs skipped), computed by the samebits library (sb_unary, exact mode, one
 * path), against x86 long double (64-bit significand) libm.
 *
 * A long double reference within a few of its ulps of the truth rounds to the
 * correctly rounded float32 unless it lies very near a midpoint between two
 * floats: those inputs ("hard") are written to a file for an arbitrary
 * precision check (bench/accuracy_exhaustive.py does it with mpmath); the
 * counts here exclude them.
 *
 * Usage: accuracy_exhaustive FUNCTION PATH THREADS HARD_FILE [fast]
 * Prints one JSON object. Built and run by bench/accuracy_exhaustive.py. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "samebits.h"

#define BLOCK (1u << 20)
#define NAMES 7
static const char *const NAME[NAMES] = {"exp", "log", "tanh", "erf", "sigmoid", "sin", "cos"};
static const int OP_CODE[NAMES] = {0, 1, 2, 3, 4, 19, 20};   /* enum sb_unary_op */

static int op, path, mode = SB_MODE_EXACT;
static FILE *hard_file;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_block;                  /* of 4096 blocks */

typedef struct {
    uint64_t checked, correct, hard, off_by_one, worse;
    long double max_ulps;
    uint32_t max_ulps_input, first_wrong[8];
    int nwrong;
} tally;

static long double reference(long double x)
{
    switch (op) {
    case 0: return expl(x);
    case 1: return logl(x);
    case 2: return tanhl(x);
    case 3: return erfl(x);
    case 5: return sinl(x);
    case 6: return cosl(x);
    default: return 1.0L / (1.0L + expl(-x));
    }
}

static float bits_to_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t float_to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* float32's ulp at |v| (subnormal spacing below the normal range). */
static long double ulp_at(long double v)
{
    int e;
    frexpl(fabsl(v), &e);                    /* |v| in [2^(e-1), 2^e) */
    if (e - 1 < -126) e = -125;
    return ldexpl(1.0L, e - 1 - 23);
}

static void check_block(uint32_t block, const float *x, const float *y, tally *t)
{
    for (uint32_t i = 0; i < BLOCK; ++i) {
        float xi = x[i];
        if (xi != xi) continue;
        long double ref = reference((long double)xi);
        float got = y[i];
        t->checked++;
        if (ref != ref) {                    /* log of a negative: NaN expected */
            if (got == got) t->worse++;
            else t->correct++;
            continue;
        }
        float want = (float)ref;             /* nearest, from the long double */
        /* Near a midpoint between floats? Then the rounding of ref may be
         * wrong: leave it to the arbitrary-precision check. */
        if (isfinite(want) && isfinite(ref) && ref != 0.0L) {
            long double u = ulp_at(ref);
            long double below = floorl(ref / u) * u;
            long double mid = below + u / 2;
            if (fabsl(ref - mid) <= ldexpl(fabsl(ref), -56)) {
                t->hard++;
                pthread_mutex_lock(&lock);
                fprintf(hard_file, "%08x %08x\n", block * BLOCK + i, float_to_bits(got));
                pthread_mutex_unlock(&lock);
                continue;
            }
        }
        if (float_to_bits(got) == float_to_bits(want)) {
            t->correct++;
            continue;
        }
        long double ulps;
        if (isinf(got) || isinf(want))
            ulps = isinf(got) && isinf(want) && (got > 0) == (want > 0) ? 0.0L : 1e30L;
        else
            ulps = fabsl((long double)got - ref) / ulp_at(ref);
        if (ulps > t->max_ulps) t->max_ulps = ulps, t->max_ulps_input = block * BLOCK + i;
        if (float_to_bits(got) == float_to_bits(nextafterf(want, INFINITY)) ||
            float_to_bits(got) == float_to_bits(nextafterf(want, -INFINITY)))
            t->off_by_one++;
        else
            t->worse++;
        if (t->nwrong < 8) t->first_wrong[t->nwrong++] = block * BLOCK + i;
    }
}

static void *worker(void *arg)
{
    tally *t = arg;
    float *x = malloc(BLOCK * sizeof(float)), *y = malloc(BLOCK * sizeof(float));
    if (!x || !y) exit(2);
    for (;;) {
        pthread_mutex_lock(&lock);
        uint32_t block = next_block++;
        pthread_mutex_unlock(&lock);
        if (block >= 4096) break;
        for (uint32_t i = 0; i < BLOCK; ++i) x[i] = bits_to_float(block * BLOCK + i);
        sb_unary_args args = {.path = path, .mode = mode, .op = OP_CODE[op], .max_threads = 1,
                              .count = BLOCK, .x = (int64_t)(intptr_t)x,
                              .y = (int64_t)(intptr_t)y};
        if (sb_unary(&args) != SB_OK) exit(3);
        check_block(block, x, y, t);
    }
    free(x), free(y);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5 && !(argc == 6 && !strcmp(argv[5], "fast"))) {
        fprintf(stderr, "usage: %s FUNCTION PATH THREADS HARD_FILE [fast]\n", argv[0]);
        return 2;
    }
    if (argc == 6) mode = SB_MODE_FAST;
    op = -1;
    for (int i = 0; i < NAMES; ++i)
        if (!strcmp(argv[1], NAME[i])) op = i;
    path = -1;
    for (int i = 0; i < sb_path_count(); ++i)
        if (!strcmp(argv[2], sb_path_name(i))) path = i;
    int threads = atoi(argv[3]);
    if (op < 0 || path < 0 || !sb_path_supported(path) || threads < 1 || threads > 64) return 2;
    hard_file = fopen(argv[4], "w");
    if (!hard_file) return 2;
    tally t[64];
    memset(t, 0, sizeof t);
    pthread_t th[64];
    for (int i = 0; i < threads; ++i) pthread_create(&th[i], NULL, worker, &t[i]);
    tally all = {0};
    for (int i = 0; i < threads; ++i) {
        pthread_join(th[i], NULL);
        all.checked += t[i].checked, all.correct += t[i].correct, all.hard += t[i].hard;
        all.off_by_one += t[i].off_by_one, all.worse += t[i].worse;
        if (t[i].max_ulps > all.max_ulps)
            all.max_ulps = t[i].max_ulps, all.max_ulps_input = t[i].max_ulps_input;
        for (int k = 0; k < t[i].nwrong && all.nwrong < 8; ++k)
            all.first_wrong[all.nwrong++] = t[i].first_wrong[k];
    }
    fclose(hard_file);
    printf("{\"function\": \"%s\", \"path\": \"%s\", \"checked\": %llu, \"correct\": %llu, "
           "\"hard\": %llu, \"off_by_one\": %llu, \"worse\": %llu, \"max_ulps\": %.6Lf, "
           "\"max_ulps_input\": \"%08x\", \"first_wrong\": [",
           NAME[op], argv[2], (unsigned long long)all.checked, (unsigned long long)all.correct,
           (unsigned long long)all.hard, (unsigned long long)all.off_by_one,
           (unsigned long long)all.worse, all.max_ulps, all.max_ulps_input);
    for (int k = 0; k < all.nwrong; ++k) printf("%s\"%08x\"", k ? ", " : "", all.first_wrong[k]);
    printf("]}\n");
    return 0;
}
