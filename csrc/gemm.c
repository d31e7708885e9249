/* The blocked matrix product (Goto and van de Geijn): packing, tiles, chunks.
 *
 * B is packed once per call (or once for many calls, by sb_pack_b): for each
 * block of SB_KC rows, strips of NR columns, each strip kc x NR (element
 * (p, j) at p*NR + j), ragged columns padded with +0, and the strip count
 * padded with zero strips to a multiple of the path's row_strips so the row
 * kernel always sees whole groups. A packing chunk is SB_PACK_STRIPS strips of
 * one k-block. When B has unit column stride and C has a single tile row, the
 * tiles read B in place instead: packing would buy no reuse.
 *
 * C is cut into MC x NC tiles; a tile is one chunk. For each k-block the tile
 * packs its rows of A into MR-row strips and runs the tile kernel for every
 * (A strip, B strip) pair. A product with one row of A runs the row kernel
 * over groups of strips instead, streaming B once. Block kb > 0 continues from
 * the values block kb - 1 stored, so every output sums its k products in
 * increasing order from +0, whatever the blocking, kernel, path or threads.
 *
 * This file never learns which ISA runs: it reads MR, NR, MC, NC, the row
 * width and the kernels from the path table. */
#include <string.h>
#include "samebits.h"
#include "sb_internal.h"
#include "conv_internal.h"

#define NS_PER_PACKED 0.5            /* per element packed, copied or streamed */
#define IN_PLACE_MAX_TILE_ROWS 4     /* read B in place up to this many tile rows */
#define IN_PLACE_MAX_ROW_FLOATS 1024 /* ... when its rows are at most 4 KiB apart */
/* With one tile row, at most this many rows of B (each a stream the
 * prefetchers follow) and at least this many columns, B read in place beats
 * panel mode: the panel's packing pass is not repaid by so few row strips,
 * provided the rows do not fall into too few sets of a 32 KiB, 8-way
 * first-level cache (a row step that is a multiple of 4 KiB puts every row in
 * one set). Measured on avx2 in one process, in place against panel mode:
 * MobileNetV3's one-tile-row 1x1 layers with 3136 or 12544 columns
 * (k = 16..72) 1.15-1.23x, 8 x 32 x 20000 1.28x, 24 x 120 x 5000 1.10x; but
 * 32 x 64 x 4096 (16 KiB steps) 0.66x, 40 x 96 x 1000 0.84-0.92x and, with
 * k = 768, 0.74-0.80x: those keep panel mode. */
#define IN_PLACE_MAX_ROWS_ONE_TILE 128
#define IN_PLACE_MIN_COLS_ONE_TILE 2048
#define L1_WAYS 8
#define L1_SETS 64
#define L1_LINE 64

static size_t gcd_size(size_t a, size_t b)
{
    while (b) { size_t t = a % b; a = b; b = t; }
    return a;
}

/* Whether k rows of B, row_floats apart, read in place stay in the first
 * level: at most IN_PLACE_MAX_ROWS_ONE_TILE, and at most L1_WAYS per set
 * they can land in. */
static int streams_fit_l1(size_t k, ptrdiff_t row_floats)
{
    if (k > IN_PLACE_MAX_ROWS_ONE_TILE || row_floats <= 0) return 0;
    const size_t span = (size_t)L1_SETS * L1_LINE;   /* bytes before the sets repeat */
    size_t step = (size_t)row_floats * sizeof(float) % span;
    size_t sets = span / gcd_size(step, span);       /* gcd(0, span) = span: one set */
    if (sets > L1_SETS) sets = L1_SETS;
    return k <= sets * L1_WAYS;
}

typedef struct {
    const sb_path_desc *path;
    sb_ukernel_fn ukernel;
    sb_ukernel_fn narrow_kernel;  /* null when the path's narrow tile is not narrower */
    sb_row_kernel_fn row_kernel;
    int exact;
    size_t m, n, k;
    const float *a;
    ptrdiff_t a_row, a_col;
    const float *packed_a;       /* prepacked A (sb_pack_a), or null: packed per tile */
    size_t a_strips;             /* MR-row strips of A: ceil(m / MR) */
    const float *b;              /* B as given: the packing source, or read in place */
    ptrdiff_t b_row, b_col;
    float *c;
    ptrdiff_t ldc;
    const float *packed_b;       /* null when the kernels read B in place */
    sb_b_gather_fn gather_b;     /* fills packed_b: pack_b_strips, or a convolution's */
    const void *gather_ctx;
    int gather_by_strip;         /* compute_panel: gather one strip at a time (patches) */
    const float *row_bias;       /* epilogue: see sb_epilogue_rows */
    int activation;
    size_t b_strips;             /* strips in the packed layout (padded to row groups) */
    size_t k_blocks;
    size_t tiles_m, tiles_n;
    size_t nc;                   /* tile width for this shape (see tile_width) */
    size_t row_cols;             /* outputs per row-kernel call: row_strips * NR */
    float *scratch;              /* per thread; see scratch_layout() */
    size_t scratch_floats;
} gemm_call;

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

static size_t k_block_depth(size_t k, size_t kb) { return min_size(k - kb * SB_KC, SB_KC); }

static size_t packed_strips(const sb_path_desc *path, size_t n)
{
    size_t group = (size_t)path->row_strips;
    return ceil_div(ceil_div(n, (size_t)path->nr), group) * group;
}

/* A row piece of a strip: constant sizes become a few vector moves. */
static inline void copy_strip_row(float *dst, const float *src, size_t cols)
{
    switch (cols) {
    case 4: memcpy(dst, src, 4 * sizeof(float)); return;
    case 8: memcpy(dst, src, 8 * sizeof(float)); return;
    case 12: memcpy(dst, src, 12 * sizeof(float)); return;
    case 16: memcpy(dst, src, 16 * sizeof(float)); return;
    case 32: memcpy(dst, src, 32 * sizeof(float)); return;
    default: memcpy(dst, src, cols * sizeof(float)); return;
    }
}

/* Strips [strip0, strip_end) of rows [p0, p0 + kc) of B, +0 past column n. */
static void pack_b_strips(const gemm_call *g, size_t p0, size_t kc, size_t strip0,
                          size_t strip_end, float *dst)
{
    const size_t nr = (size_t)g->path->nr;
    for (size_t s = strip0; s < strip_end; ++s) {
        size_t j0 = s * nr;
        size_t cols = j0 < g->n ? min_size(g->n - j0, nr) : 0;
        for (size_t p = 0; p < kc; ++p) {
            const float *src = g->b + (ptrdiff_t)(p0 + p) * g->b_row + (ptrdiff_t)j0 * g->b_col;
            float *out = dst + p * nr;
            if (g->b_col == 1) {
                copy_strip_row(out, src, cols);
            } else {
                for (size_t j = 0; j < cols; ++j) out[j] = src[(ptrdiff_t)j * g->b_col];
            }
            for (size_t j = cols; j < nr; ++j) out[j] = 0.0f;
        }
        dst += kc * nr;
    }
}

/* pack_b_strips' result, for panel mode: a row-major B is read row by row
 * across all the strips (a few whole cache lines per row, which the
 * prefetchers follow when B's rows are far apart); strip s's row p lands at
 * s*kc*NR + p*NR. Packing all of B strip by strip measured faster for tall
 * products, whose B rows are close together. */
static void pack_b_panel_rows(const gemm_call *g, size_t p0, size_t kc, size_t strip0,
                          size_t strip_end, float *dst)
{
    const size_t nr = (size_t)g->path->nr, strip_floats = kc * nr;
    const size_t j_begin = strip0 * nr;
    const size_t j_live = g->n > j_begin ? min_size(g->n - j_begin, (strip_end - strip0) * nr) : 0;
    const size_t whole = j_live / nr;   /* strips with every column inside B */
    if (g->b_col == 1) {
        for (size_t p = 0; p < kc; ++p) {
            const float *src = g->b + (ptrdiff_t)(p0 + p) * g->b_row + (ptrdiff_t)j_begin;
            float *out = dst + p * nr;
            for (size_t s = 0; s < whole; ++s) copy_strip_row(out + s * strip_floats, src + s * nr, nr);
        }
    } else {
        for (size_t s = 0; s < whole; ++s) {
            float *out = dst + s * strip_floats;
            const float *col = g->b + (ptrdiff_t)p0 * g->b_row + (ptrdiff_t)(j_begin + s * nr) * g->b_col;
            for (size_t p = 0; p < kc; ++p) {
                const float *src = col + (ptrdiff_t)p * g->b_row;
                for (size_t j = 0; j < nr; ++j) out[p * nr + j] = src[(ptrdiff_t)j * g->b_col];
            }
        }
    }
    /* The ragged strip (if any) and zero strips past n. */
    for (size_t s = whole; s < strip_end - strip0; ++s) {
        size_t j0 = j_begin + s * nr;
        size_t cols = j0 < g->n ? min_size(g->n - j0, nr) : 0;
        float *out = dst + s * strip_floats;
        for (size_t p = 0; p < kc; ++p) {
            const float *src = g->b + (ptrdiff_t)(p0 + p) * g->b_row + (ptrdiff_t)j0 * g->b_col;
            for (size_t j = 0; j < cols; ++j) out[p * nr + j] = src[(ptrdiff_t)j * g->b_col];
            for (size_t j = cols; j < nr; ++j) out[p * nr + j] = 0.0f;
        }
    }
}

/* Rows [i0, i0 + rows) x columns [p0, p0 + kc) of A as MR-row strips,
 * element (p, r) of a strip at p*MR + r, rows past the end +0. */
static void pack_a_strips(const gemm_call *g, size_t i0, size_t rows, size_t p0, size_t kc,
                          float *dst)
{
    const size_t mr = (size_t)g->path->mr;
    for (size_t r0 = 0; r0 < rows; r0 += mr) {
        size_t live = min_size(rows - r0, mr);
        const float *src = g->a + (ptrdiff_t)(i0 + r0) * g->a_row + (ptrdiff_t)p0 * g->a_col;
        if (g->a_col == 1) {
            /* Row-major A: read each row in order, write it down the strip (in L1). */
            for (size_t r = 0; r < live; ++r) {
                const float *row = src + (ptrdiff_t)r * g->a_row;
                for (size_t p = 0; p < kc; ++p) dst[p * mr + r] = row[p];
            }
            for (size_t r = live; r < mr; ++r)
                for (size_t p = 0; p < kc; ++p) dst[p * mr + r] = 0.0f;
        } else {
            for (size_t p = 0; p < kc; ++p) {
                const float *col = src + (ptrdiff_t)p * g->a_col;
                float *out = dst + p * mr;
                for (size_t r = 0; r < live; ++r) out[r] = col[(ptrdiff_t)r * g->a_row];
                for (size_t r = live; r < mr; ++r) out[r] = 0.0f;
            }
        }
        dst += kc * mr;
    }
}

/* The plain matrix B as a gatherer (sb_b_gather_fn). */
static void gather_matrix_b(const void *ctx, size_t p0, size_t kc, size_t strip0,
                            size_t strip_end, size_t nr, float *dst)
{
    (void)nr;
    pack_b_strips(ctx, p0, kc, strip0, strip_end, dst);
}

static void gather_matrix_panel(const void *ctx, size_t p0, size_t kc, size_t strip0,
                                size_t strip_end, size_t nr, float *dst)
{
    (void)nr;
    pack_b_panel_rows(ctx, p0, kc, strip0, strip_end, dst);
}

static size_t packed_block_offset(size_t b_strips, size_t nr, size_t kb)
{
    return kb * SB_KC * b_strips * nr;
}

static void pack_b_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const gemm_call *g = ctx;
    const size_t nr = (size_t)g->path->nr;
    size_t groups = ceil_div(g->b_strips, SB_PACK_STRIPS);
    size_t kb = chunk / groups;
    size_t strip0 = (chunk % groups) * SB_PACK_STRIPS;
    size_t strip_end = min_size(strip0 + SB_PACK_STRIPS, g->b_strips);
    size_t kc = k_block_depth(g->k, kb);
    float *dst = (float *)g->packed_b + packed_block_offset(g->b_strips, nr, kb) + strip0 * kc * nr;
    g->gather_b(g->gather_ctx, kb * SB_KC, kc, strip0, strip_end, nr, dst);
}

/* A finished piece of C (rows from `row` on): bias, activation, and in exact
 * mode the canonical NaN, applied while the piece is still in cache. */
static void finish_outputs(const gemm_call *g, float *c, size_t row, size_t rows, size_t cols)
{
    if (!g->exact && !g->row_bias && g->activation == SB_ACT_NONE) return;
    sb_epilogue_rows(c, g->ldc, rows, cols, g->row_bias ? g->row_bias + row : NULL,
                     g->activation, g->exact);
}

static void copy_tile(const float *src, ptrdiff_t lds, float *dst, ptrdiff_t ldd, size_t rows,
                      size_t cols)
{
    for (size_t i = 0; i < rows; ++i)
        memcpy(dst + (ptrdiff_t)i * ldd, src + (ptrdiff_t)i * lds, cols * sizeof(float));
}

/* Per-thread scratch: packed A block, a packed B edge (strips of B read in
 * place that are too narrow), and an edge output buffer. */
typedef struct { float *packed_a, *edge_b, *edge_c, *panel; } scratch_layout;

static size_t edge_b_floats(const sb_path_desc *p) { return (size_t)SB_KC * p->row_strips * p->nr; }

static size_t edge_c_floats(const sb_path_desc *p)
{
    return (size_t)p->mr * p->nr + (size_t)p->row_strips * p->nr;
}

/* panel_floats: room for a gathered panel of B (compute_panel), or 0. */
static size_t scratch_floats_for(const sb_path_desc *p, size_t panel_floats)
{
    size_t floats = (size_t)p->mc * SB_KC + edge_b_floats(p) + edge_c_floats(p) + panel_floats;
    return (floats + 15) & ~(size_t)15;   /* keep each thread's part 64-byte aligned */
}

static scratch_layout scratch_for(const gemm_call *g, int thread_index)
{
    scratch_layout s;
    s.packed_a = g->scratch + (size_t)thread_index * g->scratch_floats;
    s.edge_b = s.packed_a + (size_t)g->path->mc * SB_KC;
    s.edge_c = s.edge_b + edge_b_floats(g->path);
    s.panel = s.edge_c + edge_c_floats(g->path);
    return s;
}

/* The tile kernel down one strip of B (kc rows at bp, row step b_step, the
 * live_cols columns from `col`) and the A block's strips for rows
 * [i0, i0 + rows); ragged edges run the full kernel on a scratch tile. */
static void run_strip(const gemm_call *g, scratch_layout s, size_t kc, const float *a_block,
                      const float *bp, ptrdiff_t b_step, size_t i0, size_t rows, size_t col,
                      size_t live_cols, int accumulate, int last)
{
    const size_t mr = (size_t)g->path->mr, nr = (size_t)g->path->nr;
    for (size_t ii = 0; ii < rows; ii += mr) {
        const float *ap = a_block + (ii / mr) * kc * mr;
        size_t live_rows = min_size(rows - ii, mr);
        float *cp = g->c + (ptrdiff_t)(i0 + ii) * g->ldc + (ptrdiff_t)col;
        if (live_rows == mr && live_cols == nr) {
            g->ukernel(kc, ap, bp, b_step, cp, g->ldc, accumulate);
        } else {   /* through a tile buffer; few live columns take the narrow tile */
            sb_ukernel_fn kernel = g->narrow_kernel && live_cols <= (size_t)g->path->narrow_nr
                                       ? g->narrow_kernel : g->ukernel;
            if (accumulate) copy_tile(cp, g->ldc, s.edge_c, (ptrdiff_t)nr, live_rows, live_cols);
            kernel(kc, ap, bp, b_step, s.edge_c, (ptrdiff_t)nr, accumulate);
            copy_tile(s.edge_c, (ptrdiff_t)nr, cp, g->ldc, live_rows, live_cols);
        }
        if (last) finish_outputs(g, cp, i0 + ii, live_rows, live_cols);
    }
}

static void compute_tile(void *ctx, size_t chunk, int thread_index)
{
    const gemm_call *g = ctx;
    const size_t mr = (size_t)g->path->mr, nr = (size_t)g->path->nr;
    const size_t mc = (size_t)g->path->mc, nc = g->nc;
    /* Tiles that share B columns are adjacent chunks, so concurrent threads
     * read the same B strips. */
    size_t tile_n = chunk / g->tiles_m, tile_m = chunk % g->tiles_m;
    size_t i0 = tile_m * mc, rows = min_size(g->m - i0, mc);
    size_t j0 = tile_n * nc, cols = min_size(g->n - j0, nc);
    scratch_layout s = scratch_for(g, thread_index);

    for (size_t kb = 0; kb < g->k_blocks; ++kb) {
        size_t kc = k_block_depth(g->k, kb);
        int accumulate = kb > 0, last = kb + 1 == g->k_blocks;
        const float *a_block = s.packed_a;
        if (g->packed_a)   /* tiles start on whole strips: MC is a multiple of MR */
            a_block = g->packed_a + kb * SB_KC * g->a_strips * mr + (i0 / mr) * kc * mr;
        else
            pack_a_strips(g, i0, rows, kb * SB_KC, kc, s.packed_a);
        for (size_t jj = 0; jj < cols; jj += nr) {
            size_t strip = (j0 + jj) / nr;
            size_t live_cols = min_size(cols - jj, nr);
            const float *bp;
            ptrdiff_t b_step;
            if (g->packed_b) {
                bp = g->packed_b + packed_block_offset(g->b_strips, nr, kb) + strip * kc * nr;
                b_step = (ptrdiff_t)nr;
            } else if (live_cols == nr) {
                bp = g->b + (ptrdiff_t)(kb * SB_KC) * g->b_row + (ptrdiff_t)(j0 + jj);
                b_step = g->b_row;
            } else {   /* the ragged last strip of B read in place: pack it */
                pack_b_strips(g, kb * SB_KC, kc, strip, strip + 1, s.edge_b);
                bp = s.edge_b;
                b_step = (ptrdiff_t)nr;
            }
            run_strip(g, s, kc, a_block, bp, b_step, i0, rows, j0 + jj, live_cols, accumulate,
                      last);
        }
    }
}

/* ---- B gathered panel by panel (patches, or a plain B beside few rows) --
 *
 * A chunk is a panel of PANEL_STRIPS strips of B and every row of prepacked
 * A. For each k-block the chunk gathers its panel into its scratch (128 KiB
 * on avx2: it stays in the second-level cache; a plain B is read a few whole
 * cache lines per row, which the prefetchers follow), then runs the kernel
 * down every row for each strip while that strip sits in the first level.
 * Patches are gathered a strip at a time instead, straight into the first
 * level: their reads are short runs anyway, and the strip is used at once. The patch matrix is never
 * written whole and no patch is gathered twice. When a product has too few
 * panels to share among threads but several tile rows (small maps, many
 * channels), sb_gemm_run gathers B whole instead, in parallel, and the tiles
 * share it: gathering per row tile would repeat the work. */
#define PANEL_STRIPS 8
#define MIN_PANEL_CHUNKS 8
#define PANEL_MAX_TILE_ROWS 4        /* plain B through panel mode: up to 4 tile rows */
#define PANEL_MIN_B_FLOATS 65536.0   /* ... when B is over 256 KiB (smaller: in place) */

static void compute_panel(void *ctx, size_t chunk, int thread_index)
{
    const gemm_call *g = ctx;
    const size_t mr = (size_t)g->path->mr, nr = (size_t)g->path->nr;
    size_t j0 = chunk * PANEL_STRIPS * nr, cols = min_size(g->n - j0, PANEL_STRIPS * nr);
    scratch_layout s = scratch_for(g, thread_index);

    for (size_t kb = 0; kb < g->k_blocks; ++kb) {
        size_t kc = k_block_depth(g->k, kb);
        int accumulate = kb > 0, last = kb + 1 == g->k_blocks;
        const float *a_block = g->packed_a + kb * SB_KC * g->a_strips * mr;
        if (!g->gather_by_strip)
            g->gather_b(g->gather_ctx, kb * SB_KC, kc, j0 / nr, j0 / nr + ceil_div(cols, nr), nr,
                        s.panel);
        for (size_t jj = 0; jj < cols; jj += nr) {
            const float *strip = s.panel;
            if (g->gather_by_strip)
                g->gather_b(g->gather_ctx, kb * SB_KC, kc, (j0 + jj) / nr, (j0 + jj) / nr + 1, nr,
                            s.panel);
            else
                strip += (jj / nr) * kc * nr;
            run_strip(g, s, kc, a_block, strip, (ptrdiff_t)nr, 0, g->m, j0 + jj,
                      min_size(cols - jj, nr), accumulate, last);
        }
    }
}

/* One row of A: a chunk is ROW_GROUPS_PER_CHUNK groups of row_strips strips. */
#define ROW_GROUPS_PER_CHUNK 16

/* One group of row_strips strips from packed B, or the ragged last group of B
 * read in place (packed here, a k-block at a time); compute_row_panel does
 * the whole groups of B in place. */
static void compute_row_group(const gemm_call *g, size_t j0, scratch_layout s)
{
    const size_t nr = (size_t)g->path->nr;
    const size_t live = min_size(g->n - j0, g->row_cols);
    float *out = live == g->row_cols ? g->c + j0 : s.edge_c;

    for (size_t kb = 0; kb < g->k_blocks; ++kb) {
        size_t kc = k_block_depth(g->k, kb);
        const float *bp;
        if (g->packed_b) {
            bp = g->packed_b + packed_block_offset(g->b_strips, nr, kb) + (j0 / nr) * kc * nr;
        } else {
            pack_b_strips(g, kb * SB_KC, kc, j0 / nr, j0 / nr + (size_t)g->path->row_strips,
                          s.edge_b);
            bp = s.edge_b;
        }
        g->row_kernel(kc, g->a + (ptrdiff_t)(kb * SB_KC) * g->a_col, g->a_col, bp,
                      (ptrdiff_t)nr, (ptrdiff_t)(kc * nr), out, kb > 0);
    }
    if (out == s.edge_c) memcpy(g->c + j0, s.edge_c, live * sizeof(float));
    finish_outputs(g, g->c + j0, 0, 1, live);
}

/* B read in place, groups of whole width: walk down B in blocks of
 * ROW_P_BLOCK rows across the chunk's groups, so that B is read a few
 * contiguous rows at a time while the chunk's outputs stay in L1. */
#define ROW_P_BLOCK 8

static void compute_row_panel(const gemm_call *g, size_t j0, size_t j_end)
{
    for (size_t p0 = 0; p0 < g->k; p0 += ROW_P_BLOCK) {
        size_t pb = min_size(g->k - p0, ROW_P_BLOCK);
        for (size_t j = j0; j < j_end; j += g->row_cols)
            g->row_kernel(pb, g->a + (ptrdiff_t)p0 * g->a_col, g->a_col,
                          g->b + (ptrdiff_t)p0 * g->b_row + (ptrdiff_t)j, g->b_row,
                          (ptrdiff_t)g->path->nr, g->c + j, p0 > 0);
    }
    finish_outputs(g, g->c + j0, 0, 1, j_end - j0);
}

static void compute_row_chunk(void *ctx, size_t chunk, int thread_index)
{
    const gemm_call *g = ctx;
    scratch_layout s = scratch_for(g, thread_index);
    size_t j0 = chunk * ROW_GROUPS_PER_CHUNK * g->row_cols;
    size_t j_end = min_size(g->n, (chunk + 1) * ROW_GROUPS_PER_CHUNK * g->row_cols);
    size_t whole_end = g->packed_b ? j0 : j0 + (j_end - j0) / g->row_cols * g->row_cols;
    if (whole_end > j0) compute_row_panel(g, j0, whole_end);
    for (size_t j = whole_end; j < j_end; j += g->row_cols) compute_row_group(g, j, s);
}

static void fill_zero(float *c, ptrdiff_t ldc, size_t m, size_t n)
{
    for (size_t i = 0; i < m; ++i) memset(c + (ptrdiff_t)i * ldc, 0, n * sizeof(float));
}

static int mul_overflows(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > (size_t)-1 / a) return 1;
    *out = a * b;
    return 0;
}

static int packed_bytes(const sb_path_desc *path, size_t k, size_t n, size_t *bytes)
{
    size_t floats;
    if (mul_overflows(packed_strips(path, n) * (size_t)path->nr, k, &floats)) return 1;
    return mul_overflows(floats, sizeof(float), bytes);
}

size_t sb_packed_b_bytes(int path, size_t k, size_t n)
{
    size_t bytes;
    if (!sb_path_built(path) || packed_bytes(sb_path_get(path), k, n, &bytes)) return 0;
    return bytes;
}

/* Tile width: the path's NC, narrowed when C has few tile rows so that the
 * product still has MIN_TILE_CHUNKS chunks to share out (in builds with
 * threads). A function of the path, the build and the shape, never of the
 * thread count; and tile sizes never change a result anyway. */
#define MIN_TILE_CHUNKS 8

static size_t tile_width(const sb_path_desc *path, size_t m, size_t n)
{
    const size_t nr = (size_t)path->nr, tiles_m = ceil_div(m, (size_t)path->mc);
    if (tiles_m == 0 || tiles_m >= MIN_TILE_CHUNKS || !sb_threading_available())
        return (size_t)path->nc;
    size_t columns_wanted = ceil_div(MIN_TILE_CHUNKS, tiles_m);
    size_t width = ceil_div(ceil_div(n, columns_wanted), nr) * nr;
    if (width < 4 * nr) width = 4 * nr;
    return width < (size_t)path->nc ? width : (size_t)path->nc;
}

static void init_call(gemm_call *g, const sb_path_desc *path, int mode, size_t m, size_t n,
                      size_t k)
{
    memset(g, 0, sizeof *g);
    g->path = path;
    g->exact = mode == SB_MODE_EXACT;
    g->ukernel = g->exact ? g->path->exact : g->path->fast;
    if (g->path->narrow_nr < g->path->nr)
        g->narrow_kernel = g->exact ? g->path->narrow_exact : g->path->narrow_fast;
    g->row_kernel = g->exact ? g->path->row_exact : g->path->row_fast;
    g->m = m, g->n = n, g->k = k;
    g->b_strips = packed_strips(g->path, n);
    g->k_blocks = ceil_div(k, SB_KC);
    g->tiles_m = ceil_div(m, (size_t)g->path->mc);
    g->nc = tile_width(g->path, m, n);
    g->tiles_n = ceil_div(n, g->nc);
    g->row_cols = (size_t)g->path->row_strips * (size_t)g->path->nr;
    g->scratch_floats = scratch_floats_for(g->path, 0);
}

static void pack_b_parallel(gemm_call *g, int max_threads)
{
    size_t chunks = g->k_blocks * ceil_div(g->b_strips, SB_PACK_STRIPS);
    double ns = (double)g->k * (double)g->b_strips * (double)g->path->nr * NS_PER_PACKED;
    sb_parallel_run(sb_pool_threads_for(max_threads, ns, chunks), chunks, pack_b_chunk, g);
}

int sb_pack_b(int path, int max_threads, size_t k, size_t n, const float *b, ptrdiff_t b_row,
              ptrdiff_t b_col, void *packed, size_t packed_size)
{
    if (max_threads < 1) return SB_ERR_ARGUMENT;
    if (!sb_path_supported(path)) return SB_ERR_PATH;
    if (packed_size < sb_packed_b_bytes(path, k, n)) return SB_ERR_ARGUMENT;
    if (k == 0 || n == 0) return SB_OK;
    if (!b || !packed) return SB_ERR_ARGUMENT;
    gemm_call g;
    init_call(&g, sb_path_get(path), SB_MODE_FAST, 0, n, k);
    g.b = b, g.b_row = b_row, g.b_col = b_col;
    g.packed_b = packed;
    g.gather_b = gather_matrix_b, g.gather_ctx = &g;
    pack_b_parallel(&g, max_threads);
    return SB_OK;
}

int sb_gemm_run(const sb_gemm_args *args)
{
    const size_t m = args->m, n = args->n, k = args->k;
    if (args->mode != SB_MODE_FAST && args->mode != SB_MODE_EXACT) return SB_ERR_ARGUMENT;
    if (args->max_threads < 1) return SB_ERR_ARGUMENT;
    if (!sb_path_supported(args->path)) return SB_ERR_PATH;
    if (m == 0 || n == 0) return SB_OK;
    int has_a = args->a || args->packed_a, has_b = args->b || args->packed_b || args->gather_b;
    if (!args->c || (k > 0 && (!has_a || !has_b))) return SB_ERR_ARGUMENT;
    if (args->gather_b && !args->packed_a) return SB_ERR_ARGUMENT;   /* see compute_panel */

    gemm_call g;
    init_call(&g, args->tile ? args->tile : sb_path_get(args->path), args->mode, m, n, k);
    g.a = args->a, g.a_row = args->a_row, g.a_col = args->a_col;
    g.packed_a = args->packed_a;
    g.a_strips = ceil_div(m, (size_t)g.path->mr);
    g.b = args->b, g.b_row = args->b_row, g.b_col = args->b_col;
    g.c = args->c, g.ldc = args->ldc;
    g.row_bias = args->row_bias, g.activation = args->activation;
    if (k == 0) {
        fill_zero(g.c, g.ldc, m, n);
        finish_outputs(&g, g.c, 0, m, n);
        return SB_OK;
    }
    g.gather_b = args->gather_b ? args->gather_b : gather_matrix_b;
    g.gather_ctx = args->gather_b ? args->gather_ctx : (const void *)&g;
    if (m == 1 && g.packed_a) {   /* one packed row: its values lie MR apart */
        g.a = g.packed_a, g.a_col = g.path->mr, g.packed_a = NULL;
    }

    size_t b_bytes;
    if (packed_bytes(g.path, k, n, &b_bytes)) return SB_ERR_NO_MEMORY;
    const float *prepacked = args->packed_b;
    /* Packing B buys reuse only across tile rows; with few of them, and rows of
     * B close enough together for the TLB, the kernels read B where it is. */
    int in_place = !prepacked && !args->gather_b && g.b_col == 1 &&
                   (g.tiles_m == 1 || (g.tiles_m <= IN_PLACE_MAX_TILE_ROWS &&
                                       g.b_row > 0 && g.b_row <= IN_PLACE_MAX_ROW_FLOATS));
    int single_row = m == 1;
    int shareable = g.tiles_m == 1 || !sb_threading_available() ||
                    ceil_div(g.b_strips, PANEL_STRIPS) >= MIN_PANEL_CHUNKS;
    /* A gathered B is gathered panel by panel inside the tiles, never whole,
     * unless there are too few panels to share among threads and several tile
     * rows: then it is gathered once and shared. A single row of A (which
     * reads each strip once) takes it packed whole too. */
    int panels = args->gather_b && !single_row && shareable;
    /* A plain B with few rows of A: A is packed once and B strip by strip
     * into the first-level cache (panel mode), rather than B read in place
     * with its rows far apart or packed whole into memory and read back. */
    int own_a = 0;
    if (!prepacked && !args->gather_b && !single_row && shareable &&
        g.tiles_m <= PANEL_MAX_TILE_ROWS && (double)k * (double)n > PANEL_MIN_B_FLOATS &&
        !(g.tiles_m == 1 && n >= IN_PLACE_MIN_COLS_ONE_TILE && streams_fit_l1(k, g.b_row))) {
        panels = 1, in_place = 0, own_a = !g.packed_a;
        g.gather_b = gather_matrix_panel;
    }
    size_t chunks;
    double ns;
    if (single_row) {
        chunks = ceil_div(n, ROW_GROUPS_PER_CHUNK * g.row_cols);
        ns = (double)n * (double)k * NS_PER_PACKED;
    } else if (panels) {
        chunks = ceil_div(g.b_strips, PANEL_STRIPS);
        g.gather_by_strip = args->gather_b != NULL;
        g.scratch_floats = scratch_floats_for(
            g.path, (size_t)SB_KC * (g.gather_by_strip ? 1 : PANEL_STRIPS) * g.path->nr);
        ns = (double)m * (double)n * (double)k / g.path->muladds_per_ns +
             (double)n * (double)k * NS_PER_PACKED;
    } else {
        chunks = g.tiles_m * g.tiles_n;
        ns = (double)m * (double)n * (double)k / g.path->muladds_per_ns +
             (g.packed_a ? 0.0 : (double)m * (double)k * (double)g.tiles_n * NS_PER_PACKED);
    }
    int threads = sb_pool_threads_for(args->max_threads, ns, chunks);

    /* One workspace: the packed B (unless prepacked, read in place or
     * gathered per panel), then every thread's scratch. */
    size_t own_b_bytes = prepacked || in_place || panels ? 0 : (b_bytes + 63) & ~(size_t)63;
    size_t own_a_bytes = own_a ? (sb_packed_a_floats(g.path, m, k) * sizeof(float) + 63) & ~(size_t)63 : 0;
    size_t scratch_bytes = (size_t)threads * g.scratch_floats * sizeof(float);
    if (own_b_bytes > (size_t)-1 - scratch_bytes - own_a_bytes) return SB_ERR_NO_MEMORY;
    unsigned char *workspace = sb_workspace_get(own_b_bytes + own_a_bytes + scratch_bytes);
    if (!workspace) return SB_ERR_NO_MEMORY;
    g.scratch = (float *)(void *)(workspace + own_b_bytes + own_a_bytes);
    if (own_a) {   /* a few tile rows of A: small, packed on the calling thread */
        float *packed_a = (float *)(void *)(workspace + own_b_bytes);
        sb_pack_a(g.path, m, k, g.a, g.a_row, g.a_col, packed_a);
        g.packed_a = packed_a;
    }
    if (prepacked) {
        g.packed_b = prepacked;
    } else if (!in_place && !panels) {
        g.packed_b = (float *)(void *)workspace;
        pack_b_parallel(&g, args->max_threads);
    }
    sb_chunk_fn compute = single_row ? compute_row_chunk : panels ? compute_panel : compute_tile;
    sb_parallel_run(threads, chunks, compute, &g);

    sb_workspace_release(workspace);
    return SB_OK;
}

size_t sb_packed_a_floats(const sb_path_desc *path, size_t m, size_t k)
{
    return ceil_div(m, (size_t)path->mr) * (size_t)path->mr * k;
}

void sb_pack_a(const sb_path_desc *path, size_t m, size_t k, const float *a, ptrdiff_t a_row,
               ptrdiff_t a_col, float *dst)
{
    gemm_call g;
    memset(&g, 0, sizeof g);
    g.path = path, g.m = m, g.k = k;
    g.a = a, g.a_row = a_row, g.a_col = a_col;
    size_t strips = ceil_div(m, (size_t)path->mr);
    for (size_t kb = 0; kb * SB_KC < k; ++kb)
        pack_a_strips(&g, 0, m, kb * SB_KC, k_block_depth(k, kb),
                      dst + kb * SB_KC * strips * (size_t)path->mr);
}

static int run_gemm(int path, int mode, int max_threads, size_t m, size_t n, size_t k,
                    const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
                    const float *b, ptrdiff_t b_row, ptrdiff_t b_col, const void *prepacked,
                    float *c, ptrdiff_t ldc)
{
    sb_gemm_args args;
    memset(&args, 0, sizeof args);
    args.path = path, args.mode = mode, args.max_threads = max_threads;
    args.m = m, args.n = n, args.k = k;
    args.a = a, args.a_row = a_row, args.a_col = a_col;
    args.b = b, args.b_row = b_row, args.b_col = b_col;
    args.packed_b = prepacked;
    args.c = c, args.ldc = ldc;
    return sb_gemm_run(&args);
}

int sb_sgemm(int path, int mode, int max_threads, size_t m, size_t n, size_t k,
             const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
             const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
             float *c, ptrdiff_t ldc)
{
    return run_gemm(path, mode, max_threads, m, n, k, a, a_row, a_col, b, b_row, b_col, NULL,
                    c, ldc);
}

int sb_sgemm_packed(int path, int mode, int max_threads, size_t m, size_t n, size_t k,
                    const float *a, ptrdiff_t a_row, ptrdiff_t a_col, const void *packed_b,
                    float *c, ptrdiff_t ldc)
{
    if (!packed_b && k > 0 && m > 0 && n > 0) return SB_ERR_ARGUMENT;
    return run_gemm(path, mode, max_threads, m, n, k, a, a_row, a_col, NULL, 0, 0, packed_b,
                    c, ldc);
}

int sb_sgemm_argv(const int64_t *args)
{
    if (!args) return SB_ERR_ARGUMENT;
    const float *a = (const float *)(intptr_t)args[6];
    const float *b = (const float *)(intptr_t)args[9];
    float *c = (float *)(intptr_t)args[12];
    for (int i = 3; i < 6; ++i)
        if (args[i] < 0 || (uint64_t)args[i] > (uint64_t)SIZE_MAX) return SB_ERR_ARGUMENT;
    if (args[14])
        return sb_sgemm_packed((int)args[0], (int)args[1], (int)args[2], (size_t)args[3],
                               (size_t)args[4], (size_t)args[5], a, (ptrdiff_t)args[7],
                               (ptrdiff_t)args[8], b, c, (ptrdiff_t)args[13]);
    return sb_sgemm((int)args[0], (int)args[1], (int)args[2], (size_t)args[3], (size_t)args[4],
                    (size_t)args[5], a, (ptrdiff_t)args[7], (ptrdiff_t)args[8], b,
                    (ptrdiff_t)args[10], (ptrdiff_t)args[11], c, (ptrdiff_t)args[13]);
}
