/* A C-only check of every path the build target runs, for targets where the
 * Python package cannot run (arm64 under qemu-user). For each supported path:
 * exact mode bit-identical to sb_sgemm_naive over a sweep of shapes with
 * special values, and fast mode identical at 1 and 3 threads and, for at
 * most 4 columns, to the first columns of a wider product; and a few rows
 * times a B whose columns are contiguous, against the naive loop and B
 * row-major. Prints one
 * FNV-1a digest of all exact outputs, which must be equal on every target.
 * Exit status 0 only if every check passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "samebits.h"

static const size_t SIZES[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 16, 17, 31, 33, 70};
static const size_t DEPTHS[] = {0, 1, 2, 5, 17, 70, 255, 256, 257, 300};
#define COUNT(x) (sizeof(x) / sizeof((x)[0]))
#define MAXD 70
#define MAXK 300

static unsigned long long fnv1a(unsigned long long h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

int main(void)
{
    /* A and B inside padded buffers: row strides MAXK + 3 and MAXD + 5. */
    const ptrdiff_t lda = MAXK + 3, ldb = MAXD + 5, ldc = MAXD + 1;
    float *a = malloc(sizeof(float) * MAXD * lda), *b = malloc(sizeof(float) * MAXK * ldb);
    float *want = malloc(sizeof(float) * MAXD * ldc), *got = malloc(sizeof(float) * MAXD * ldc);
    float *got3 = malloc(sizeof(float) * MAXD * ldc);
    const ptrdiff_t ldbt = MAXK + 3;   /* B^T row-major: B's columns contiguous */
    float *bt = malloc(sizeof(float) * MAXD * ldbt);
    if (!a || !b || !want || !got || !got3 || !bt) return 2;
    sb_fill_test_values(a, (size_t)(MAXD * lda), 11, 40);
    sb_fill_test_values(b, (size_t)(MAXK * ldb), 12, 40);

    unsigned long long digest = 1469598103934665603ull;
    int failures = 0, checked_paths = 0;
    for (int path = 0; path < sb_path_count(); ++path) {
        if (!sb_path_supported(path)) continue;
        ++checked_paths;
        unsigned long long path_digest = 1469598103934665603ull;
        for (size_t ki = 0; ki < COUNT(DEPTHS); ++ki)
            for (size_t mi = 0; mi < COUNT(SIZES); ++mi)
                for (size_t ni = 0; ni < COUNT(SIZES); ++ni) {
                    size_t m = SIZES[mi], n = SIZES[ni], k = DEPTHS[ki];
                    sb_sgemm_naive(m, n, k, a, lda, 1, b, ldb, 1, want, ldc);
                    sb_sgemm(path, SB_MODE_EXACT, 1, m, n, k, a, lda, 1, b, ldb, 1, got, ldc);
                    for (size_t i = 0; i < m; ++i) {
                        if (memcmp(got + i * ldc, want + i * ldc, n * sizeof(float))) {
                            if (failures++ < 10)
                                printf("FAIL exact path=%s m=%zu n=%zu k=%zu row %zu\n",
                                       sb_path_name(path), m, n, k, i);
                        }
                        path_digest = fnv1a(path_digest, got + i * ldc, n * sizeof(float));
                    }
                    sb_sgemm(path, SB_MODE_FAST, 1, m, n, k, a, lda, 1, b, ldb, 1, got, ldc);
                    sb_sgemm(path, SB_MODE_FAST, 3, m, n, k, a, lda, 1, b, ldb, 1, got3, ldc);
                    for (size_t i = 0; i < m; ++i)
                        if (memcmp(got + i * ldc, got3 + i * ldc, n * sizeof(float)) &&
                            failures++ < 10)
                            printf("FAIL fast threads path=%s m=%zu n=%zu k=%zu\n",
                                   sb_path_name(path), m, n, k);
                    /* at most 4 columns take the few-column route: the same
                     * bits as the tiles give them among 5 more columns */
                    if (n < 1 || n > 4) continue;
                    sb_sgemm(path, SB_MODE_FAST, 1, m, n + 5, k, a, lda, 1, b, ldb, 1, got3, ldc);
                    for (size_t i = 0; i < m; ++i)
                        if (memcmp(got + i * ldc, got3 + i * ldc, n * sizeof(float)) &&
                            failures++ < 10)
                            printf("FAIL fast few columns path=%s m=%zu n=%zu k=%zu\n",
                                   sb_path_name(path), m, n, k);
                }
        /* A few rows times B with its columns contiguous (B^T row-major, as
         * linear's weights): the transposed column route where the path
         * reads A in place; exact the naive loop's bits, fast the bits of
         * the same product with B row-major, at 1 and 3 threads. */
        for (size_t ki = 0; ki < COUNT(DEPTHS); ++ki)
            for (size_t m = 1; m <= 5; ++m)
                for (size_t ni = 0; ni < COUNT(SIZES); ++ni) {
                    size_t n = SIZES[ni], k = DEPTHS[ki];
                    for (size_t j = 0; j < n; ++j)
                        for (size_t p = 0; p < k; ++p) bt[j * ldbt + p] = b[p * ldb + j];
                    sb_sgemm_naive(m, n, k, a, lda, 1, bt, 1, ldbt, want, ldc);
                    sb_sgemm(path, SB_MODE_EXACT, 1, m, n, k, a, lda, 1, bt, 1, ldbt, got, ldc);
                    for (size_t i = 0; i < m; ++i)
                        if (memcmp(got + i * ldc, want + i * ldc, n * sizeof(float)) &&
                            failures++ < 10)
                            printf("FAIL exact B transposed path=%s m=%zu n=%zu k=%zu\n",
                                   sb_path_name(path), m, n, k);
                    sb_sgemm(path, SB_MODE_FAST, 1, m, n, k, a, lda, 1, b, ldb, 1, want, ldc);
                    for (int threads = 1; threads <= 3; threads += 2) {
                        sb_sgemm(path, SB_MODE_FAST, threads, m, n, k, a, lda, 1, bt, 1, ldbt,
                                 got, ldc);
                        for (size_t i = 0; i < m; ++i)
                            if (memcmp(got + i * ldc, want + i * ldc, n * sizeof(float)) &&
                                failures++ < 10)
                                printf("FAIL fast B transposed path=%s m=%zu n=%zu k=%zu t%d\n",
                                       sb_path_name(path), m, n, k, threads);
                    }
                }
        printf("path %s exact-digest %016llx\n", sb_path_name(path), path_digest);
        if (checked_paths == 1) digest = path_digest;
        else if (path_digest != digest) {
            printf("FAIL path %s digest differs\n", sb_path_name(path));
            ++failures;
        }
    }
    printf("exact-digest %016llx paths %d failures %d\n", digest, checked_paths, failures);
    free(a), free(b), free(want), free(got), free(got3), free(bt);
    return failures ? 1 : 0;
}
