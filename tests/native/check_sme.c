/* The sme path's check (arm64 with SME, run under qemu-user at each
 * streaming vector length by tests/builds/test_sme.py): the matrix
 * products on the sme path against the definitions, over shapes drawn
 * from this vector length's tile (2VL x 2VL): m, n and k of 1, below one
 * vector, not a multiple of VL, one tile, one tile and a ragged edge, and
 * k across the 256-deep k-blocks; A row-major (read in place where the
 * planner does), column-major (packed) and B packed ahead
 * (sb_sgemm_packed); special values in A and B.
 *   exact mode: bit-identical to sb_sgemm_naive, at 1 and 3 threads;
 *   fast mode: bit-identical to a fused-order reference (each output
 *     fmaf(a, b, acc) from +0 in increasing k, NaN made 0x7FC00000), at
 *     1 and 3 threads.
 * Prints the vector length, the tile and one FNV-1a digest of the exact
 * outputs; exit status 0 only if every check passed, 77 where the CPU has
 * no SME (the path is then not supported). */
#include <math.h>
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

static float canonical(float v)
{
    if (v != v) {
        const uint32_t bits = 0x7FC00000u;
        memcpy(&v, &bits, sizeof v);
    }
    return v;
}

static void fused_reference(size_t m, size_t n, size_t k, const float *a, ptrdiff_t a_row,
                            ptrdiff_t a_col, const float *b, ptrdiff_t ldb, float *c, ptrdiff_t ldc)
{
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (size_t p = 0; p < k; ++p)
                acc = fmaf(a[(ptrdiff_t)i * a_row + (ptrdiff_t)p * a_col], b[(ptrdiff_t)p * ldb + (ptrdiff_t)j], acc);
            c[(ptrdiff_t)i * ldc + (ptrdiff_t)j] = canonical(acc);
        }
}

/* The lazy ZA save (AAPCS64): a caller with live ZA data points TPIDR2_EL0
 * at a block {buffer, slices} before calling a private-ZA function; one
 * that uses ZA must first save the slices there and clear TPIDR2_EL0 (what
 * __arm_tpidr2_save does). za_fill turns ZA on and fills it from `rows`
 * (SVL bytes each); tpidr2_set / tpidr2_get set and read TPIDR2_EL0;
 * za_off turns ZA off again. */
__asm__(".arch armv9-a+sme\n.text\n"
        ".globl za_fill\n.type za_fill, %function\nza_fill:\n"
        "smstart za\n"
        "rdsvl x1, #1\n"
        "mov w12, #0\n"
        "1: ldr za[w12, 0], [x0]\n"
        "addsvl x0, x0, #1\n"
        "add w12, w12, #1\n"
        "cmp x12, x1\n"
        "b.lo 1b\n"
        "ret\n"
        ".globl za_off\n.type za_off, %function\nza_off:\nsmstop za\nret\n"
        ".globl tpidr2_set\n.type tpidr2_set, %function\ntpidr2_set:\nmsr tpidr2_el0, x0\nret\n"
        ".globl tpidr2_get\n.type tpidr2_get, %function\ntpidr2_get:\nmrs x0, tpidr2_el0\nret\n");
void za_fill(const unsigned char *rows);
void za_off(void);
void tpidr2_set(void *block);
void *tpidr2_get(void);

/* A product on the sme path while the caller's ZA is pending a lazy save:
 * the kernel must save it into the block's buffer and clear TPIDR2_EL0. The
 * product has 8 columns: at most 4 take the few-column route, plain C that
 * never touches ZA (and so leaves the save pending, as the ABI allows). */
static int lazy_save_committed(int sme, size_t svl_bytes)
{
    size_t bytes = svl_bytes * svl_bytes;
    unsigned char *rows = malloc(bytes), *saved = calloc(bytes, 1);
    float a[4] = {1, 2, 3, 4}, b[16], c[16];
    for (int i = 0; i < 16; ++i) b[i] = (float)(5 + i);   /* 2 x 8 */
    if (!rows || !saved) return 0;
    for (size_t i = 0; i < bytes; ++i) rows[i] = (unsigned char)(i * 7 + 3);
    struct { void *buffer; uint16_t slices; uint8_t reserved[6]; } block = {saved, (uint16_t)svl_bytes, {0}};
    za_fill(rows);
    tpidr2_set(&block);
    int status = sb_sgemm(sme, SB_MODE_FAST, 1, 2, 8, 2, a, 2, 1, b, 8, 1, c, 8);
    void *after = tpidr2_get();
    za_off();
    tpidr2_set(NULL);
    int ok = status == SB_OK && after == NULL && !memcmp(saved, rows, bytes) && c[0] == 31.0f && c[15] == 116.0f;
    free(rows), free(saved);
    return ok;
}

static int same_rows(const float *x, const float *y, size_t m, size_t n, ptrdiff_t ldc)
{
    for (size_t i = 0; i < m; ++i)
        if (memcmp(x + (ptrdiff_t)i * ldc, y + (ptrdiff_t)i * ldc, n * sizeof(float))) return 0;
    return 1;
}

/* A float no kernel writes (a signalling NaN: every path's outputs make NaN
 * 0x7FC00000), filling C before a call so that a write outside the m x n
 * outputs shows. */
#define UNTOUCHED 0x7FA5A5A5u

static void fill_untouched(float *c, size_t count)
{
    const uint32_t bits = UNTOUCHED;
    for (size_t i = 0; i < count; ++i) memcpy(c + i, &bits, sizeof bits);
}

/* Whether the `total` floats at c outside rows [0, m) x columns [0, n)
 * (row step ldc) still hold UNTOUCHED. */
static int outside_untouched(const float *c, size_t total, size_t m, size_t n, ptrdiff_t ldc)
{
    for (size_t i = 0; i < total; ++i) {
        size_t row = i / (size_t)ldc, col = i % (size_t)ldc;
        uint32_t bits;
        memcpy(&bits, c + i, sizeof bits);
        if ((row >= m || col >= n) && bits != UNTOUCHED) return 0;
    }
    return 1;
}

int main(void)
{
    int sme = -1;
    for (int p = 0; p < sb_path_count(); ++p)
        if (!strcmp(sb_path_name(p), "sme")) sme = p;
    if (sme < 0 || !sb_path_supported(sme)) {
        printf("sme not supported here\n");
        return 77;
    }
    const size_t tile = (size_t)sb_path_tile_rows(sme), vl = tile / 2;
    printf("sme vector-bits %zu tile %dx%d\n", vl * 32, sb_path_tile_rows(sme), sb_path_tile_cols(sme));
    int failures = 0, cases = 0;
    if (!lazy_save_committed(sme, vl * 4)) {
        printf("FAIL the caller's lazily saved ZA was not committed\n");
        ++failures;
    }

    /* Emulated, a 2048-bit outer product is 4,096 multiply-adds: the longest
     * vectors get the shapes that matter most (a row, a ragged edge on
     * either side, several tiles) so that the check stays seconds long. */
    const int long_vectors = vl >= 32;
    size_t dims[] = {1, 3, vl - 1, vl + 1, 2 * vl, 2 * vl + 3};
    size_t depths[] = {1, 5, 2 * vl + 1, 257};
    size_t short_dims[] = {1, vl - 1, 2 * vl + 3}, short_depths[] = {1, 257};
    const size_t nd = long_vectors ? 3 : sizeof dims / sizeof dims[0];
    const size_t nk = long_vectors ? 2 : sizeof depths / sizeof depths[0];
    if (long_vectors) {
        memcpy(dims, short_dims, sizeof short_dims);
        memcpy(depths, short_depths, sizeof short_depths);
    }
    const size_t maxd = 2 * vl + 3, maxk = 257;
    const ptrdiff_t lda = (ptrdiff_t)maxk + 3, ldb = (ptrdiff_t)maxd + 5, ldc = (ptrdiff_t)maxd + 1;
    float *a = malloc(sizeof(float) * maxd * (size_t)lda), *b = malloc(sizeof(float) * maxk * (size_t)ldb);
    float *at = malloc(sizeof(float) * maxk * maxd);      /* A column-major */
    float *want = malloc(sizeof(float) * maxd * (size_t)ldc), *got = malloc(sizeof(float) * maxd * (size_t)ldc);
    size_t packed_size = sb_packed_b_bytes(sme, maxk, maxd);
    void *packed = malloc(packed_size);
    if (!a || !b || !at || !want || !got || !packed) return 2;
    sb_fill_test_values(a, maxd * (size_t)lda, 21, 40);
    sb_fill_test_values(b, maxk * (size_t)ldb, 22, 40);

    unsigned long long digest = 1469598103934665603ull;
    for (size_t ki = 0; ki < nk; ++ki)
        for (size_t mi = 0; mi < nd; ++mi)
            for (size_t ni = 0; ni < nd; ++ni) {
                size_t m = dims[mi], n = dims[ni], k = depths[ki];
                if (m == 0 || n == 0) continue;
                ++cases;
                for (size_t i = 0; i < m; ++i)
                    for (size_t p = 0; p < k; ++p) at[p * m + i] = a[(ptrdiff_t)i * lda + (ptrdiff_t)p];
                int packed_ok = sb_pack_b(sme, 1, k, n, b, ldb, 1, packed, packed_size) == SB_OK;
                for (int mode = 0; mode < 2; ++mode) {
                    if (mode == SB_MODE_EXACT) sb_sgemm_naive(m, n, k, a, lda, 1, b, ldb, 1, want, ldc);
                    else fused_reference(m, n, k, a, lda, 1, b, ldb, want, ldc);
                    for (int form = 0; form < 4; ++form) {
                        int threads = form == 1 ? 3 : 1, status;
                        fill_untouched(got, maxd * (size_t)ldc);
                        if (form == 2)
                            status = sb_sgemm(sme, mode, threads, m, n, k, at, 1, (ptrdiff_t)m, b, ldb, 1, got, ldc);
                        else if (form == 3)
                            status = packed_ok ? sb_sgemm_packed(sme, mode, threads, m, n, k, a, lda, 1, packed,
                                                                 got, ldc) : -1;
                        else
                            status = sb_sgemm(sme, mode, threads, m, n, k, a, lda, 1, b, ldb, 1, got, ldc);
                        if (status != SB_OK || !same_rows(got, want, m, n, ldc) ||
                            !outside_untouched(got, maxd * (size_t)ldc, m, n, ldc)) {
                            if (failures++ < 10)
                                printf("FAIL %s form %d m=%zu n=%zu k=%zu (status %d)\n",
                                       mode == SB_MODE_EXACT ? "exact" : "fast", form, m, n, k, status);
                        }
                        if (mode == SB_MODE_EXACT && form == 0)
                            for (size_t i = 0; i < m; ++i)
                                digest = fnv1a(digest, got + (ptrdiff_t)i * ldc, n * sizeof(float));
                    }
                }
            }
    /* runs of whole tiles down one B strip (the strips kernel, one entry to
     * streaming mode): three strips and a ragged row, A with a column
     * stride of 2 (so packed, not read in place) */
    {
        size_t m = 6 * vl + 1, n = 2 * vl, run_depths[] = {5, 257};
        float *ra = malloc(sizeof(float) * m * 514), *rw = malloc(sizeof(float) * m * n);
        float *rg = malloc(sizeof(float) * m * n);
        if (!ra || !rw || !rg) return 2;
        sb_fill_test_values(ra, m * 514, 23, 40);
        for (size_t d = 0; d < (long_vectors ? 1u : 2u); ++d) {
            size_t k = run_depths[d];
            ++cases;
            for (int mode = 0; mode < 2; ++mode) {
                if (mode == SB_MODE_EXACT) sb_sgemm_naive(m, n, k, ra, 514, 2, b, ldb, 1, rw, (ptrdiff_t)n);
                else fused_reference(m, n, k, ra, 514, 2, b, ldb, rw, (ptrdiff_t)n);
                for (int threads = 1; threads <= 3; threads += 2) {
                    int status = sb_sgemm(sme, mode, threads, m, n, k, ra, 514, 2, b, ldb, 1, rg, (ptrdiff_t)n);
                    if (status != SB_OK || !same_rows(rg, rw, m, n, (ptrdiff_t)n)) {
                        if (failures++ < 10)
                            printf("FAIL %s strip run m=%zu n=%zu k=%zu threads %d\n",
                                   mode == SB_MODE_EXACT ? "exact" : "fast", m, n, k, threads);
                    }
                    if (mode == SB_MODE_EXACT && threads == 1)
                        digest = fnv1a(digest, rg, m * n * sizeof(float));
                }
            }
        }
        /* the same run on a ragged strip of B (n = 2VL - 3 of a row of
         * 2VL + 2): the strips kernel's column predicates, every row's
         * padding left as it was */
        const size_t rn = 2 * vl - 3, rldc = 2 * vl + 2;
        float *ew = malloc(sizeof(float) * m * rldc), *eg = malloc(sizeof(float) * m * rldc);
        if (!ew || !eg) return 2;
        ++cases;
        for (int mode = 0; mode < 2; ++mode) {
            for (size_t d = 0; d < 2; ++d) {
                size_t k = run_depths[d];   /* 257: a second k-block continues from C */
                if (mode == SB_MODE_EXACT) sb_sgemm_naive(m, rn, k, ra, 514, 2, b, ldb, 1, ew, (ptrdiff_t)rldc);
                else fused_reference(m, rn, k, ra, 514, 2, b, ldb, ew, (ptrdiff_t)rldc);
                fill_untouched(eg, m * rldc);
                int status = sb_sgemm(sme, mode, 1, m, rn, k, ra, 514, 2, b, ldb, 1, eg, (ptrdiff_t)rldc);
                if (status != SB_OK || !same_rows(eg, ew, m, rn, (ptrdiff_t)rldc) ||
                    !outside_untouched(eg, m * rldc, m, rn, (ptrdiff_t)rldc)) {
                    if (failures++ < 10)
                        printf("FAIL %s ragged strip run m=%zu n=%zu k=%zu\n",
                               mode == SB_MODE_EXACT ? "exact" : "fast", m, rn, k);
                }
            }
        }
        free(ew), free(eg);
        free(ra), free(rw), free(rg);
    }
    printf("sme-digest %016llx vector-bits %zu cases %d failures %d\n", digest, vl * 32, cases, failures);
    free(a), free(b), free(at), free(want), free(got), free(packed);
    return failures ? 1 : 0;
}
