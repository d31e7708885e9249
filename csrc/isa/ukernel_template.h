/* The kernels of kernels.h, written once and instantiated per ISA.
 *
 * The including file defines: UKR_LANES, UKR_ROW_STRIPS, UKR_TILE_MAX_MR and
 * UKR_TILE_MAX_NV (the largest tile it has), vec_t and the operations
 * vec_load, vec_store, vec_splat, vec_zero, vec_add, vec_mul,
 * vec_fma(acc, a, b) (acc + a*b; one rounding on a fused ISA) and
 * vec_canon(v) (every NaN lane replaced by 0x7FC00000), and the 4-lane
 * slivers of the few-column kernel (below). Every kernel stores its
 * outputs with NaN made canonical, in both modes: which NaN an instruction
 * passes on is the hardware's and the compiler's choice (operand order),
 * not the definition's, and this way no route, tile or path shows it. Then
 * UKR_DEFINE_TILE(name, MR, NR, fused) defines one tile's kernels and
 * UKR_DEFINE_ISA(isa, fused) the row, few-column and depthwise kernels
 * and the epilogue (epilogue_template.h);
 * UKR_TILE_KERNELS, UKR_GEMM_KERNELS and UKR_DWCONV_KERNELS name them in the
 * descriptors and configs (isa.h).
 *
 * Lanes hold different outputs (columns j), never different terms of one
 * output, so the vector width cannot change a result. Exact mode multiplies
 * and adds as two rounded operations; every file is compiled with
 * -ffp-contract=off so that the compiler cannot fuse them. */

/* The accumulator arrays are sized for the file's largest tile; the
 * compiler keeps only the ones a tile uses, in registers. */
#include "isa/epilogue_template.h"

#if !defined(UKR_TILE_MAX_MR) || !defined(UKR_TILE_MAX_NV)
#error "define UKR_TILE_MAX_MR and UKR_TILE_MAX_NV (the largest tile's MR and NR / UKR_LANES)"
#endif

static inline __attribute__((always_inline)) vec_t
ukr_step(vec_t acc, vec_t a, vec_t b, const int fused)
{
    return fused ? vec_fma(acc, a, b) : vec_add(acc, vec_mul(a, b));
}

/* Loops over a tile's rows and vectors run to the largest tile's (literal)
 * bound and skip the rest: every compiler then unrolls them fully before it
 * knows MR and NV (or the depthwise block's R and V), and keeps the
 * accumulators in registers. With MR and NV as
 * the bounds, emscripten's clang unrolled only part of them and kept the
 * accumulators on the stack (about 4x slower in exact mode in the browser). */
#define UKR_FOR(i, n, bound) for (int i = 0; i < (bound); ++i) if (i < (n))

/* The MR x (NV vectors) tile: see sb_tile_kernel_fn, sb_tile_direct_fn and
 * sb_tile_offsets_fn in kernels.h. Element (p, r) of the A strip is
 * ap[r*a_rs + p*a_ps]: packed (a_rs = 1, a_ps = MR, constants the compiler
 * folds) or read in place. Row p of B is at bp + p*b_step, or at
 * bp + b_off[p] when b_off is given (a constant null elsewhere, which the
 * compiler folds away). */
static inline __attribute__((always_inline)) void
ukr_tile(const int MR, const int NV, size_t kc, const float *restrict ap, ptrdiff_t a_rs,
         ptrdiff_t a_ps, const float *restrict bp, ptrdiff_t b_step,
         const ptrdiff_t *restrict b_off, float *restrict c, ptrdiff_t ldc, int accumulate,
         const int fused)
{
    vec_t acc[UKR_TILE_MAX_MR][UKR_TILE_MAX_NV];
    /* The C tile is written at the end: ask for its lines now, for writing,
     * so that their misses overlap the k loop instead of stalling the
     * stores (C rows far apart miss the cache and the TLB). */
#pragma GCC unroll 32
    UKR_FOR(r, MR, UKR_TILE_MAX_MR)
#pragma GCC unroll 8
        UKR_FOR(v, NV, UKR_TILE_MAX_NV)
            __builtin_prefetch(c + r * ldc + v * UKR_LANES, 1, 3);
#pragma GCC unroll 32
    UKR_FOR(r, MR, UKR_TILE_MAX_MR)
#pragma GCC unroll 8
        UKR_FOR(v, NV, UKR_TILE_MAX_NV)
            acc[r][v] = accumulate ? vec_load(c + r * ldc + v * UKR_LANES) : vec_zero();

    for (size_t p = 0; p < kc; ++p) {
        const float *restrict brow = b_off ? bp + b_off[p] : bp;
        vec_t b[UKR_TILE_MAX_NV];
#pragma GCC unroll 8
        UKR_FOR(v, NV, UKR_TILE_MAX_NV)
            b[v] = vec_load(brow + v * UKR_LANES);
#pragma GCC unroll 32
        UKR_FOR(r, MR, UKR_TILE_MAX_MR) {
            vec_t a = vec_splat(ap[r * a_rs]);
#pragma GCC unroll 8
            UKR_FOR(v, NV, UKR_TILE_MAX_NV)
                acc[r][v] = ukr_step(acc[r][v], a, b[v], fused);
        }
        ap += a_ps;
        if (!b_off) bp += b_step;
    }

#pragma GCC unroll 32
    UKR_FOR(r, MR, UKR_TILE_MAX_MR)
#pragma GCC unroll 8
        UKR_FOR(v, NV, UKR_TILE_MAX_NV)
            vec_store(c + r * ldc + v * UKR_LANES, vec_canon(acc[r][v]));
}

/* One row of A times ROW_STRIPS strips of B: see sb_row_kernel_fn. NV may be
 * a run-time value (at most UKR_TILE_MAX_NV): then the loops are not unrolled
 * but compute the same. */
static inline __attribute__((always_inline)) void
ukr_row(const int NV, size_t kc, const float *restrict a, ptrdiff_t a_step,
        const float *restrict bp, ptrdiff_t b_step, ptrdiff_t strip_step, float *restrict c,
        int accumulate, const int fused)
{
    vec_t acc[UKR_ROW_STRIPS * UKR_TILE_MAX_NV];
#pragma GCC unroll 32
    for (int v = 0; v < UKR_ROW_STRIPS * NV; ++v)
        acc[v] = accumulate ? vec_load(c + v * UKR_LANES) : vec_zero();

    for (size_t p = 0; p < kc; ++p) {
        vec_t av = vec_splat(a[(ptrdiff_t)p * a_step]);
#pragma GCC unroll 8
        for (int s = 0; s < UKR_ROW_STRIPS; ++s)
#pragma GCC unroll 8
            for (int v = 0; v < NV; ++v)
                acc[s * NV + v] = ukr_step(acc[s * NV + v], av,
                                               vec_load(bp + s * strip_step + v * UKR_LANES), fused);
        bp += b_step;
    }

#pragma GCC unroll 32
    for (int v = 0; v < UKR_ROW_STRIPS * NV; ++v)
        vec_store(c + v * UKR_LANES, vec_canon(acc[v]));
}

/* dst[i] = part[i] for i < last (1 .. UKR_LANES - 1): fixed-size moves, the
 * last overlapping the one before, and never a library call. A copy loop
 * here became a memcpy call per output row (GCC's loop distribution), 23% of
 * a 14 x 14 depthwise layer's time on avx512, whose rows are all one partial
 * vector. A path that defines vec_store_part(p, v, n) (a masked store)
 * stores the lanes directly instead: reading back parts of a vector just
 * stored to the stack stalls on store forwarding. */
static inline __attribute__((always_inline)) void
ukr_store_part(float *restrict dst, const float *restrict part, size_t last)
{
    /* the lane-count tests drop the moves a path's vector cannot need */
    if (UKR_LANES > 8 && last >= 8) {
        __builtin_memcpy(dst, part, 8 * sizeof(float));
        if (last > 8) __builtin_memcpy(dst + last - 8, part + last - 8, 8 * sizeof(float));
    } else if (UKR_LANES > 4 && last >= 4) {
        __builtin_memcpy(dst, part, 4 * sizeof(float));
        __builtin_memcpy(dst + last - 4, part + last - 4, 4 * sizeof(float));
    } else {
        dst[0] = part[0];
        if (last > 1) dst[1] = part[1];
        if (last > 2) dst[2] = part[2];
    }
}

/* Depthwise convolution rows: see sb_depthwise_kernel_fn in kernels.h. A block
 * of R output rows x V vectors of output columns keeps its R*V accumulators
 * in registers over every tap; each tap is one broadcast weight and R*V
 * loads. R <= 8 and R*V <= UKR_DW_NV, the accumulator budget, which the
 * including file may set (default 8, at most 24): the registers less two
 * (the broadcast and an exact-mode product). last is the number of valid
 * lanes of each row's last vector (UKR_LANES when whole); a partial vector
 * is stored through a small buffer. */
#ifndef UKR_DW_NV
#define UKR_DW_NV 8
#endif
#if UKR_DW_NV < 8 || UKR_DW_NV > 24
#error "UKR_DW_NV must be 8 .. 24"
#endif

static inline __attribute__((always_inline)) void
ukr_dw_tile(const int R, const int V, size_t last, size_t taps, const float *restrict w,
            const ptrdiff_t *restrict off, const float *restrict in, ptrdiff_t in_row,
            float *restrict out, ptrdiff_t out_row, const int fused)
{
    vec_t acc[UKR_DW_NV];
#pragma GCC unroll 32
    UKR_FOR(i, R * V, UKR_DW_NV)
        acc[i] = vec_zero();

    const float *row[8];
#pragma GCC unroll 8
    UKR_FOR(r, R, 8)
        row[r] = in + r * in_row;

    for (size_t t = 0; t < taps; ++t) {
        vec_t a = vec_splat(w[t]);
        const ptrdiff_t o = off[t];
#pragma GCC unroll 8
        UKR_FOR(r, R, 8)
#pragma GCC unroll 32
            UKR_FOR(v, V, UKR_DW_NV)
                acc[r * V + v] = ukr_step(acc[r * V + v], a,
                                          vec_load(row[r] + o + v * UKR_LANES), fused);
    }

#pragma GCC unroll 32
    UKR_FOR(r, R, 8) {
        float *o = out + r * out_row;
#pragma GCC unroll 32
        UKR_FOR(v, V - 1, UKR_DW_NV)
            vec_store(o + v * UKR_LANES, vec_canon(acc[r * V + v]));
        if (last == UKR_LANES) {
            vec_store(o + (V - 1) * UKR_LANES, vec_canon(acc[r * V + V - 1]));
        } else {
#ifdef vec_store_part   /* a path with masked stores */
            vec_store_part(o + (V - 1) * UKR_LANES, vec_canon(acc[r * V + V - 1]), last);
#else
            float part[UKR_LANES];
            vec_store(part, vec_canon(acc[r * V + V - 1]));
            ukr_store_part(o + (V - 1) * UKR_LANES, part, last);
#endif
        }
    }
}

#define UKR_DW_CASE(R, V)                                                              \
    case (R) * 32 + (V):                                                               \
        ukr_dw_tile(R, V, last, taps, w, off, in, in_row, out, out_row, fused);         \
        break;

/* Every (R, V) with R <= 8 and R * V <= UKR_DW_NV. */
static inline __attribute__((always_inline)) void
ukr_dw_block(int rows, int vecs, size_t last, size_t taps, const float *restrict w,
             const ptrdiff_t *restrict off, const float *restrict in, ptrdiff_t in_row,
             float *restrict out, ptrdiff_t out_row, const int fused)
{
    switch (rows * 32 + vecs) {
        UKR_DW_CASE(1, 1) UKR_DW_CASE(2, 1) UKR_DW_CASE(1, 2) UKR_DW_CASE(3, 1)
        UKR_DW_CASE(1, 3) UKR_DW_CASE(4, 1) UKR_DW_CASE(2, 2) UKR_DW_CASE(1, 4)
        UKR_DW_CASE(5, 1) UKR_DW_CASE(1, 5) UKR_DW_CASE(6, 1) UKR_DW_CASE(3, 2)
        UKR_DW_CASE(2, 3) UKR_DW_CASE(1, 6) UKR_DW_CASE(7, 1) UKR_DW_CASE(1, 7)
        UKR_DW_CASE(8, 1) UKR_DW_CASE(4, 2) UKR_DW_CASE(2, 4) UKR_DW_CASE(1, 8)
#if UKR_DW_NV >= 9
        UKR_DW_CASE(3, 3) UKR_DW_CASE(1, 9)
#endif
#if UKR_DW_NV >= 10
        UKR_DW_CASE(5, 2) UKR_DW_CASE(2, 5) UKR_DW_CASE(1, 10)
#endif
#if UKR_DW_NV >= 11
        UKR_DW_CASE(1, 11)
#endif
#if UKR_DW_NV >= 12
        UKR_DW_CASE(6, 2) UKR_DW_CASE(4, 3) UKR_DW_CASE(3, 4) UKR_DW_CASE(2, 6)
        UKR_DW_CASE(1, 12)
#endif
#if UKR_DW_NV >= 13
        UKR_DW_CASE(1, 13)
#endif
#if UKR_DW_NV >= 14
        UKR_DW_CASE(7, 2) UKR_DW_CASE(2, 7) UKR_DW_CASE(1, 14)
#endif
#if UKR_DW_NV >= 15
        UKR_DW_CASE(5, 3) UKR_DW_CASE(3, 5) UKR_DW_CASE(1, 15)
#endif
#if UKR_DW_NV >= 16
        UKR_DW_CASE(8, 2) UKR_DW_CASE(4, 4) UKR_DW_CASE(2, 8) UKR_DW_CASE(1, 16)
#endif
#if UKR_DW_NV >= 17
        UKR_DW_CASE(1, 17)
#endif
#if UKR_DW_NV >= 18
        UKR_DW_CASE(6, 3) UKR_DW_CASE(3, 6) UKR_DW_CASE(2, 9) UKR_DW_CASE(1, 18)
#endif
#if UKR_DW_NV >= 19
        UKR_DW_CASE(1, 19)
#endif
#if UKR_DW_NV >= 20
        UKR_DW_CASE(5, 4) UKR_DW_CASE(4, 5) UKR_DW_CASE(2, 10) UKR_DW_CASE(1, 20)
#endif
#if UKR_DW_NV >= 21
        UKR_DW_CASE(7, 3) UKR_DW_CASE(3, 7) UKR_DW_CASE(1, 21)
#endif
#if UKR_DW_NV >= 22
        UKR_DW_CASE(2, 11) UKR_DW_CASE(1, 22)
#endif
#if UKR_DW_NV >= 23
        UKR_DW_CASE(1, 23)
#endif
#if UKR_DW_NV >= 24
        UKR_DW_CASE(8, 3) UKR_DW_CASE(6, 4) UKR_DW_CASE(4, 6) UKR_DW_CASE(3, 8)
        UKR_DW_CASE(2, 12) UKR_DW_CASE(1, 24)
#endif
    default: break;
    }
}

/* The rows x cols outputs: each row in blocks of UKR_DW_NV whole vectors, then
 * the rest of the row (1..UKR_DW_NV vectors, the last maybe partial) for as
 * many rows at once as fit in UKR_DW_NV accumulators, so that narrow planes
 * still have independent chains. */
static inline __attribute__((always_inline)) void
ukr_dw(size_t rows, size_t cols, size_t taps, const float *restrict w,
       const ptrdiff_t *restrict off, const float *restrict in, ptrdiff_t in_row,
       float *restrict out, ptrdiff_t out_row, const int fused)
{
    if (rows == 0 || cols == 0) return;
    const size_t vecs = (cols + UKR_LANES - 1) / UKR_LANES;
    const size_t full = (vecs - 1) / UKR_DW_NV;          /* whole blocks before the rest */
    const int rest = (int)(vecs - full * UKR_DW_NV);     /* 1 .. UKR_DW_NV vectors */
    const size_t last = cols - (vecs - 1) * UKR_LANES;   /* 1 .. UKR_LANES lanes */
    const size_t group = UKR_DW_NV / rest < 8 ? UKR_DW_NV / (size_t)rest : 8;
    const size_t rest_col = full * UKR_DW_NV * UKR_LANES;
    for (size_t r0 = 0; r0 < rows; r0 += group) {
        size_t g = rows - r0 < group ? rows - r0 : group;
        for (size_t r = r0; r < r0 + g; ++r)
            for (size_t b = 0; b < full; ++b) {
                size_t col = b * UKR_DW_NV * UKR_LANES;
                ukr_dw_tile(1, UKR_DW_NV, UKR_LANES, taps, w, off,
                            in + (ptrdiff_t)r * in_row + col, in_row,
                            out + (ptrdiff_t)r * out_row + col, out_row, fused);
            }
        ukr_dw_block((int)g, rest, last, taps, w, off,
                     in + (ptrdiff_t)r0 * in_row + rest_col, in_row,
                     out + (ptrdiff_t)r0 * out_row + rest_col, out_row, fused);
    }
}

/* Few-column product (up to SB_COLUMNS_MAX columns of a convolution with a
 * small output map, few_columns.c): see sb_column_kernel_fn in kernels.h. The
 * including file defines SLIVER_LANES (4 unless it says otherwise) and a
 * type sliver_vec of that many lanes with sliver_load, sliver_store,
 * sliver_load_part(p, n) (n floats, the other lanes +0), sliver_store_part(p,
 * v, n), sliver_splat, sliver_zero, sliver_add, sliver_mul, sliver_fma (fused
 * exactly where vec_fma is) and sliver_canon. Lanes hold output channels: a
 * strip's MR rows are MR / SLIVER_LANES whole slivers and one part sliver of
 * the rest (4-lane slivers: 2 rows when MR is 4q + 2), loaded once per step
 * of k and multiplied by each of the C columns' broadcast x[p*x_step + j]; S
 * strips at a time, for about eight independent chains. */
#ifndef SLIVER_LANES
#define SLIVER_LANES 4
#endif
#define UKR_MV_MAX_PIECES 4   /* slivers per strip: MR <= 16 */
/* Each strip's weights are prefetched this many steps of k ahead (2 KiB for
 * 8-row strips). The S strips are S streams read a few bytes a step: the
 * hardware's prefetcher fell behind on weights that were not in cache, as in
 * a network, where a squeeze-and-excitation block's 1 x 1 convolutions read
 * 0.2-0.9 MiB of weights each for one column (MobileNetV3-large's ten: 476
 * -> 377 us; a chain of twenty such layers, 1.22x). */
#define UKR_MV_PREFETCH_STEPS 64
#define UKR_MV_MAX_STRIPS 4   /* strips at once */
#define UKR_MV_MAX_ACC (UKR_MV_MAX_STRIPS * SB_COLUMNS_MAX * UKR_MV_MAX_PIECES)
/* strip i, column j, sliver q (S, C and PIECES are constants of an instance) */
#define UKR_MV_ACC(i, j, q) acc[((i) * C + (j)) * PIECES + (q)]
/* the rows of sliver q: whole, or the part left at the strip's end */
#define UKR_MV_WIDTH(q) ((q) < Q ? SLIVER_LANES : PART)
#if UKR_TILE_MAX_MR > 16
#error "the few-column kernel wants MR of at most 16"
#endif
#if SB_COLUMNS_MAX != 4
#error "ukr_mv_strips unrolls for SB_COLUMNS_MAX = 4 columns"
#endif

static inline __attribute__((always_inline)) sliver_vec
ukr_sliver_step(sliver_vec acc, sliver_vec a, sliver_vec b, const int fused)
{
    return fused ? sliver_fma(acc, a, b) : sliver_add(acc, sliver_mul(a, b));
}

static inline __attribute__((always_inline)) sliver_vec
ukr_sliver_get(const int width, const float *p)
{
    return width == SLIVER_LANES ? sliver_load(p) : sliver_load_part(p, width);
}

static inline __attribute__((always_inline)) void
ukr_sliver_put(const int width, float *p, sliver_vec v)
{
    v = sliver_canon(v);
    if (width == SLIVER_LANES) sliver_store(p, v);
    else sliver_store_part(p, v, width);
}

/* S strips from strip0, C columns: outputs y[j*y_col + strip*MR + r] for
 * rows below `rows`. */
static inline __attribute__((always_inline)) void
ukr_mv_strips(const int MR, const int S, const int C, size_t kc, size_t rows, size_t strip0,
              const float *restrict ap, const float *restrict x, ptrdiff_t x_step,
              float *restrict y, ptrdiff_t y_col, int accumulate, const int fused)
{
    const int Q = MR / SLIVER_LANES, PIECES = Q + (MR % SLIVER_LANES != 0);
    const int PART = MR % SLIVER_LANES;
    const float *base[UKR_MV_MAX_STRIPS] = {0};
    float *out[UKR_MV_MAX_STRIPS][SB_COLUMNS_MAX] = {{0}};
    float edge[UKR_MV_MAX_STRIPS][SB_COLUMNS_MAX][16];   /* a ragged strip's outputs */
    sliver_vec acc[UKR_MV_MAX_ACC];
    /* Every slot set, so that an instance with a run-time MR is visibly
     * initialized; unrolled instances drop the stores they do not use. */
    for (int i = 0; i < UKR_MV_MAX_ACC; ++i) acc[i] = sliver_zero();
#pragma GCC unroll 4
    UKR_FOR(i, S, UKR_MV_MAX_STRIPS) {
        size_t row = (strip0 + (size_t)i) * (size_t)MR;
        base[i] = ap + (strip0 + (size_t)i) * kc * (size_t)MR;
#pragma GCC unroll 4
        UKR_FOR(j, C, SB_COLUMNS_MAX) {
            float *col = y + (ptrdiff_t)j * y_col;
            if (row + (size_t)MR <= rows) {
                out[i][j] = col + row;
            } else {   /* the last strip, some of its rows past the outputs */
                out[i][j] = edge[i][j];
                for (int r = 0; r < MR; ++r)
                    edge[i][j][r] = row + (size_t)r < rows ? col[row + r] : 0.0f;
            }
#pragma GCC unroll 4
            UKR_FOR(q, PIECES, UKR_MV_MAX_PIECES)
                UKR_MV_ACC(i, j, q) = accumulate ? ukr_sliver_get(UKR_MV_WIDTH(q),
                                                                  out[i][j] + SLIVER_LANES * q)
                                                 : sliver_zero();
        }
    }
    for (size_t p = 0; p < kc; ++p) {
        /* (an address, not a pointer: it may lie past the weights; a prefetch
         * never faults) */
#pragma GCC unroll 4
        UKR_FOR(i, S, UKR_MV_MAX_STRIPS)
            __builtin_prefetch((const void *)((uintptr_t)base[i] +
                                              (p + UKR_MV_PREFETCH_STEPS) * MR * sizeof(float)));
        sliver_vec xv[SB_COLUMNS_MAX];
#pragma GCC unroll 4
        UKR_FOR(j, C, SB_COLUMNS_MAX) xv[j] = sliver_splat(x[(ptrdiff_t)p * x_step + j]);
#pragma GCC unroll 4
        UKR_FOR(i, S, UKR_MV_MAX_STRIPS)
#pragma GCC unroll 4
            UKR_FOR(q, PIECES, UKR_MV_MAX_PIECES) {
                sliver_vec w = ukr_sliver_get(UKR_MV_WIDTH(q), base[i] + p * MR + SLIVER_LANES * q);
#pragma GCC unroll 4
                UKR_FOR(j, C, SB_COLUMNS_MAX)
                    UKR_MV_ACC(i, j, q) = ukr_sliver_step(UKR_MV_ACC(i, j, q), xv[j], w, fused);
            }
    }
#pragma GCC unroll 4
    UKR_FOR(i, S, UKR_MV_MAX_STRIPS) {
        size_t row = (strip0 + (size_t)i) * (size_t)MR;
#pragma GCC unroll 4
        UKR_FOR(j, C, SB_COLUMNS_MAX) {
#pragma GCC unroll 4
            UKR_FOR(q, PIECES, UKR_MV_MAX_PIECES)
                ukr_sliver_put(UKR_MV_WIDTH(q), out[i][j] + SLIVER_LANES * q, UKR_MV_ACC(i, j, q));
            if (out[i][j] == edge[i][j]) {
                float *col = y + (ptrdiff_t)j * y_col;
                for (size_t r = row; r < rows; ++r) col[r] = edge[i][j][r - row];
            }
        }
    }
}

/* C columns at once: S strips so that S*C*PIECES is about eight chains. */
static inline __attribute__((always_inline)) void
ukr_mv_columns(const int MR, const int C, size_t kc, size_t rows, const float *restrict ap,
               const float *restrict x, ptrdiff_t x_step, float *restrict y, ptrdiff_t y_col,
               int accumulate, const int fused)
{
    const int PIECES = MR / SLIVER_LANES + (MR % SLIVER_LANES != 0);
    const int S = PIECES * C >= 8 ? 1 : 8 / (PIECES * C) < UKR_MV_MAX_STRIPS ? 8 / (PIECES * C)
                                                                       : UKR_MV_MAX_STRIPS;
    const size_t strips = (rows + (size_t)MR - 1) / (size_t)MR;
    size_t s = 0;
    for (; s + (size_t)S <= strips; s += (size_t)S)
        ukr_mv_strips(MR, S, C, kc, rows, s, ap, x, x_step, y, y_col, accumulate, fused);
    for (; s < strips; ++s)
        ukr_mv_strips(MR, 1, C, kc, rows, s, ap, x, x_step, y, y_col, accumulate, fused);
}

static inline __attribute__((always_inline)) void
ukr_mv(const int MR, size_t kc, size_t rows, size_t cols, const float *restrict ap,
       const float *restrict x, ptrdiff_t x_step, float *restrict y, ptrdiff_t y_col,
       int accumulate, const int fused)
{
    switch (cols) {
    case 1: ukr_mv_columns(MR, 1, kc, rows, ap, x, x_step, y, y_col, accumulate, fused); return;
    case 2: ukr_mv_columns(MR, 2, kc, rows, ap, x, x_step, y, y_col, accumulate, fused); return;
    case 3: ukr_mv_columns(MR, 3, kc, rows, ap, x, x_step, y, y_col, accumulate, fused); return;
    default: ukr_mv_columns(MR, 4, kc, rows, ap, x, x_step, y, y_col, accumulate, fused); return;
    }
}

/* The narrow tile: MR rows by half the tile's vectors (at least one), for a
 * ragged last strip with few live columns (the framework's choice). */
#define UKR_NARROW_NV(NR) ((NR) / UKR_LANES / 2 > 0 ? (NR) / UKR_LANES / 2 : 1)

/* One tile's kernels (kernels.h): over packed A, sb_ukr_<name>_{exact,fast}
 * and sb_ukr_<name>_narrow_{exact,fast}; over A in place,
 * sb_ukr_<name>_direct_{exact,fast} and sb_ukr_<name>_narrow_direct_{exact,fast};
 * over packed A and B rows at offsets, sb_ukr_<name>_offsets_{exact,fast}
 * and sb_ukr_<name>_narrow_offsets_{exact,fast}. */
#define UKR_TILE_FN(fn, MR, NV, fused_flag)                                                   \
    void fn(size_t kc, const float *ap, const float *bp, ptrdiff_t b_step, float *c,          \
            ptrdiff_t ldc, int accumulate)                                                    \
    {                                                                                         \
        ukr_tile(MR, NV, kc, ap, 1, MR, bp, b_step, NULL, c, ldc, accumulate, fused_flag);    \
    }
#define UKR_DIRECT_FN(fn, MR, NV, fused_flag)                                                 \
    void fn(size_t kc, const float *a, ptrdiff_t a_row, ptrdiff_t a_col, const float *bp,     \
            ptrdiff_t b_step, float *c, ptrdiff_t ldc, int accumulate)                        \
    {                                                                                         \
        ukr_tile(MR, NV, kc, a, a_row, a_col, bp, b_step, NULL, c, ldc, accumulate,           \
                 fused_flag);                                                                 \
    }
#define UKR_OFFSETS_FN(fn, MR, NV, fused_flag)                                                \
    void fn(size_t kc, const float *ap, const float *b, const ptrdiff_t *b_off, float *c,     \
            ptrdiff_t ldc, int accumulate)                                                    \
    {                                                                                         \
        ukr_tile(MR, NV, kc, ap, 1, MR, b, 0, b_off, c, ldc, accumulate, fused_flag);         \
    }
#define UKR_DEFINE_TILE(name, MR, NR, fused_flag)                                            \
    UKR_TILE_FN(sb_ukr_##name##_exact, MR, (NR) / UKR_LANES, 0)                              \
    UKR_TILE_FN(sb_ukr_##name##_fast, MR, (NR) / UKR_LANES, fused_flag)                      \
    UKR_TILE_FN(sb_ukr_##name##_narrow_exact, MR, UKR_NARROW_NV(NR), 0)                      \
    UKR_TILE_FN(sb_ukr_##name##_narrow_fast, MR, UKR_NARROW_NV(NR), fused_flag)              \
    UKR_DIRECT_FN(sb_ukr_##name##_direct_exact, MR, (NR) / UKR_LANES, 0)                     \
    UKR_DIRECT_FN(sb_ukr_##name##_direct_fast, MR, (NR) / UKR_LANES, fused_flag)             \
    UKR_DIRECT_FN(sb_ukr_##name##_narrow_direct_exact, MR, UKR_NARROW_NV(NR), 0)             \
    UKR_DIRECT_FN(sb_ukr_##name##_narrow_direct_fast, MR, UKR_NARROW_NV(NR), fused_flag)    \
    UKR_OFFSETS_FN(sb_ukr_##name##_offsets_exact, MR, (NR) / UKR_LANES, 0)                   \
    UKR_OFFSETS_FN(sb_ukr_##name##_offsets_fast, MR, (NR) / UKR_LANES, fused_flag)           \
    UKR_OFFSETS_FN(sb_ukr_##name##_narrow_offsets_exact, MR, UKR_NARROW_NV(NR), 0)           \
    UKR_OFFSETS_FN(sb_ukr_##name##_narrow_offsets_fast, MR, UKR_NARROW_NV(NR), fused_flag)

/* The tile fields of an sb_tile descriptor for the kernels of
 * UKR_DEFINE_TILE(name, MR, NR, ...). */
#define UKR_TILE_KERNELS(name, NR)                                                           \
    .exact = sb_ukr_##name##_exact, .fast = sb_ukr_##name##_fast,                            \
    .narrow_nr = UKR_NARROW_NV(NR) * UKR_LANES, .narrow_exact = sb_ukr_##name##_narrow_exact, \
    .narrow_fast = sb_ukr_##name##_narrow_fast, .direct_exact = sb_ukr_##name##_direct_exact, \
    .direct_fast = sb_ukr_##name##_direct_fast,                                              \
    .narrow_direct_exact = sb_ukr_##name##_narrow_direct_exact,                              \
    .narrow_direct_fast = sb_ukr_##name##_narrow_direct_fast,                                \
    .offsets_exact = sb_ukr_##name##_offsets_exact,                                          \
    .offsets_fast = sb_ukr_##name##_offsets_fast,                                            \
    .narrow_offsets_exact = sb_ukr_##name##_narrow_offsets_exact,                            \
    .narrow_offsets_fast = sb_ukr_##name##_narrow_offsets_fast

/* The row kernel for a run-time nr: the widths the including file lists in
 * UKR_ROW_NVS(X) (X(nv) for each tile's NR / UKR_LANES) get unrolled
 * instances; any other width (up to UKR_TILE_MAX_NV) runs the same code with
 * the bound unknown. */
#define UKR_ROW_CASE(NV)                                                                     \
    case NV:                                                                                 \
        ukr_row(NV, kc, a, a_step, bp, b_step, strip_step, c, accumulate, fused);            \
        return;

static inline __attribute__((always_inline)) void
ukr_row_any(size_t nr, size_t kc, const float *restrict a, ptrdiff_t a_step,
            const float *restrict bp, ptrdiff_t b_step, ptrdiff_t strip_step, float *restrict c,
            int accumulate, const int fused)
{
    switch (nr / UKR_LANES) {
        UKR_ROW_NVS(UKR_ROW_CASE)
    default:
        ukr_row((int)(nr / UKR_LANES), kc, a, a_step, bp, b_step, strip_step, c, accumulate,
                fused);
    }
}

/* The few-column kernel for a run-time mr, likewise over UKR_COLUMN_MRS(X):
 * each listed mr and column count (and fused or not) is its own function, so
 * that the register allocator sees one instance at a time (inlined into one
 * function, GCC 12 kept some accumulators in memory, at about half speed). */
/* (named _exact and _fast: tests/builds/test_codegen.py finds fused instructions in
 * _fast functions only) */
#define UKR_MV_ONE(MR, C, MODE, F)                                                           \
    static __attribute__((noinline)) void ukr_mv_##MR##_##C##_##MODE(                        \
        size_t kc, size_t rows, const float *restrict ap, const float *restrict x,           \
        ptrdiff_t x_step, float *restrict y, ptrdiff_t y_col, int accumulate)                \
    {                                                                                        \
        ukr_mv_columns(MR, C, kc, rows, ap, x, x_step, y, y_col, accumulate, F);             \
    }
#define UKR_MV_DEFINE(MR)                                                                    \
    UKR_MV_ONE(MR, 1, exact, 0) UKR_MV_ONE(MR, 2, exact, 0) UKR_MV_ONE(MR, 3, exact, 0)      \
    UKR_MV_ONE(MR, 4, exact, 0) UKR_MV_ONE(MR, 1, fast, 1) UKR_MV_ONE(MR, 2, fast, 1)        \
    UKR_MV_ONE(MR, 3, fast, 1) UKR_MV_ONE(MR, 4, fast, 1)
UKR_COLUMN_MRS(UKR_MV_DEFINE)

#define UKR_MV_CALL(MR, C)                                                                   \
    (fused ? ukr_mv_##MR##_##C##_fast : ukr_mv_##MR##_##C##_exact)(kc, rows, ap, x, x_step,  \
                                                                   y, y_col, accumulate)
#define UKR_COLUMN_CASE(MR)                                                                  \
    case MR:                                                                                 \
        switch (cols) {                                                                      \
        case 1: UKR_MV_CALL(MR, 1); return;                                                  \
        case 2: UKR_MV_CALL(MR, 2); return;                                                  \
        case 3: UKR_MV_CALL(MR, 3); return;                                                  \
        default: UKR_MV_CALL(MR, 4); return;                                                 \
        }

static inline __attribute__((always_inline)) void
ukr_column_any(size_t mr, size_t kc, size_t rows, size_t cols, const float *restrict ap,
               const float *restrict x, ptrdiff_t x_step, float *restrict y, ptrdiff_t y_col,
               int accumulate, const int fused)
{
    switch (mr) {
        UKR_COLUMN_MRS(UKR_COLUMN_CASE)
    default:
        ukr_mv((int)mr, kc, rows, cols, ap, x, x_step, y, y_col, accumulate, fused);
    }
}

/* The kernels of an ISA that are not tied to one tile: sb_row_<isa>_*,
 * sb_column_<isa>_* and sb_dw_<isa>_*, each {exact, fast}. */
#define UKR_DEFINE_ISA(isa, fused_flag)                                                      \
    EPILOGUE_DEFINE(sb_epilogue_##isa)                                                       \
    void sb_row_##isa##_exact(size_t nr, size_t kc, const float *a, ptrdiff_t a_step,        \
                              const float *bp, ptrdiff_t b_step, ptrdiff_t strip_step,       \
                              float *c, int accumulate)                                      \
    {                                                                                        \
        ukr_row_any(nr, kc, a, a_step, bp, b_step, strip_step, c, accumulate, 0);            \
    }                                                                                        \
    void sb_row_##isa##_fast(size_t nr, size_t kc, const float *a, ptrdiff_t a_step,         \
                             const float *bp, ptrdiff_t b_step, ptrdiff_t strip_step,        \
                             float *c, int accumulate)                                       \
    {                                                                                        \
        ukr_row_any(nr, kc, a, a_step, bp, b_step, strip_step, c, accumulate, fused_flag);   \
    }                                                                                        \
    void sb_column_##isa##_exact(size_t mr, size_t kc, size_t rows, size_t cols,             \
                                 const float *ap, const float *x, ptrdiff_t x_step, float *y, \
                                 ptrdiff_t y_col, int accumulate)                            \
    {                                                                                        \
        ukr_column_any(mr, kc, rows, cols, ap, x, x_step, y, y_col, accumulate, 0);          \
    }                                                                                        \
    void sb_column_##isa##_fast(size_t mr, size_t kc, size_t rows, size_t cols,              \
                                const float *ap, const float *x, ptrdiff_t x_step, float *y,  \
                                ptrdiff_t y_col, int accumulate)                             \
    {                                                                                        \
        ukr_column_any(mr, kc, rows, cols, ap, x, x_step, y, y_col, accumulate, fused_flag); \
    }                                                                                        \
    void sb_dw_##isa##_exact(size_t rows, size_t cols, size_t taps, const float *w,          \
                             const ptrdiff_t *off, const float *in, ptrdiff_t in_row,        \
                             float *out, ptrdiff_t out_row)                                  \
    {                                                                                        \
        ukr_dw(rows, cols, taps, w, off, in, in_row, out, out_row, 0);                       \
    }                                                                                        \
    void sb_dw_##isa##_fast(size_t rows, size_t cols, size_t taps, const float *w,           \
                            const ptrdiff_t *off, const float *in, ptrdiff_t in_row,         \
                            float *out, ptrdiff_t out_row)                                   \
    {                                                                                        \
        ukr_dw(rows, cols, taps, w, off, in, in_row, out, out_row, fused_flag);              \
    }

/* The kernel fields of the path's sb_gemm_config and sb_dwconv_config for
 * UKR_DEFINE_ISA(isa, ...). */
#define UKR_GEMM_KERNELS(isa)                                                                \
    .lanes = UKR_LANES, .max_mr = UKR_TILE_MAX_MR, .max_nr = UKR_TILE_MAX_NV * UKR_LANES,     \
    .row_strips = UKR_ROW_STRIPS, .row_exact = sb_row_##isa##_exact,                         \
    .row_fast = sb_row_##isa##_fast, .column_exact = sb_column_##isa##_exact,                \
    .column_fast = sb_column_##isa##_fast, .epilogue = sb_epilogue_##isa
#define UKR_DWCONV_KERNELS(isa) .exact = sb_dw_##isa##_exact, .fast = sb_dw_##isa##_fast

/* The packers every tile of this build uses (pack.c). */
#define UKR_GENERIC_PACKERS                                                                  \
    .pack_a = sb_pack_a_strips, .pack_b = sb_pack_b_strips, .pack_b_rows = sb_pack_b_rows
