/* The blocked matrix product (Goto and van de Geijn): packing, tiles, chunks.
 *
 * Phase 1 packs all of B, once per call: for each block of SB_KC rows, strips
 * of NR columns, each strip kc x NR (element (p, j) at p*NR + j), a ragged
 * last strip padded with +0. A packing chunk is SB_PACK_STRIPS strips of one
 * k-block.
 * Phase 2 cuts C into MC x NC tiles; a tile is one chunk. For each k-block the
 * tile packs its rows of A into MR-row strips, then runs the microkernel for
 * every (A strip, B strip) pair. Block kb > 0 continues from the values block
 * kb - 1 stored in C, so every output sums its k products in increasing order
 * from +0, whatever the tile sizes, the path or the threads.
 *
 * This file never learns which ISA runs: it reads MR, NR, MC, NC and the
 * microkernel from the path table. */
#include <string.h>
#include "samebits.h"
#include "sb_internal.h"

#define NS_PER_MULADD (1.0 / 40.0)   /* single-thread estimate for tile work */
#define NS_PER_PACKED 0.5            /* per element packed or copied */

typedef struct {
    const sb_path_desc *path;
    sb_ukernel_fn ukernel;
    int exact;
    size_t m, n, k;
    const float *a;
    ptrdiff_t a_row, a_col;
    const float *b;
    ptrdiff_t b_row, b_col;
    float *c;
    ptrdiff_t ldc;
    float *packed_b;
    size_t b_strips;             /* ceil(n / NR) */
    size_t k_blocks;             /* ceil(k / KC) */
    size_t tiles_m, tiles_n;
    float *scratch;              /* per thread: MC x KC packed A, then an MR x NR tile */
    size_t scratch_floats;
} gemm_call;

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

static size_t k_block_depth(const gemm_call *g, size_t kb)
{
    size_t left = g->k - kb * SB_KC;
    return left < SB_KC ? left : SB_KC;
}

/* Strips of NR columns of rows [p0, p0 + kc) of B, +0 beyond column n. */
static void pack_b_strips(const gemm_call *g, size_t p0, size_t kc, size_t strip0,
                          size_t strip_end, float *dst)
{
    const size_t nr = (size_t)g->path->nr;
    for (size_t s = strip0; s < strip_end; ++s) {
        size_t j0 = s * nr;
        size_t cols = g->n - j0 < nr ? g->n - j0 : nr;
        for (size_t p = 0; p < kc; ++p) {
            const float *src = g->b + (ptrdiff_t)(p0 + p) * g->b_row + (ptrdiff_t)j0 * g->b_col;
            float *out = dst + p * nr;
            if (g->b_col == 1) {
                memcpy(out, src, cols * sizeof(float));
            } else {
                for (size_t j = 0; j < cols; ++j) out[j] = src[(ptrdiff_t)j * g->b_col];
            }
            for (size_t j = cols; j < nr; ++j) out[j] = 0.0f;
        }
        dst += kc * nr;
    }
}

/* Rows [i0, i0 + rows) x columns [p0, p0 + kc) of A as MR-row strips,
 * element (p, r) of a strip at p*MR + r, rows past the end +0. */
static void pack_a_strips(const gemm_call *g, size_t i0, size_t rows, size_t p0, size_t kc,
                          float *dst)
{
    const size_t mr = (size_t)g->path->mr;
    for (size_t r0 = 0; r0 < rows; r0 += mr) {
        size_t live = rows - r0 < mr ? rows - r0 : mr;
        const float *src = g->a + (ptrdiff_t)(i0 + r0) * g->a_row + (ptrdiff_t)p0 * g->a_col;
        for (size_t p = 0; p < kc; ++p) {
            const float *col = src + (ptrdiff_t)p * g->a_col;
            float *out = dst + p * mr;
            for (size_t r = 0; r < live; ++r) out[r] = col[(ptrdiff_t)r * g->a_row];
            for (size_t r = live; r < mr; ++r) out[r] = 0.0f;
        }
        dst += kc * mr;
    }
}

static float *packed_b_block(const gemm_call *g, size_t kb)
{
    return g->packed_b + kb * SB_KC * g->b_strips * (size_t)g->path->nr;
}

static void pack_b_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const gemm_call *g = ctx;
    size_t groups = ceil_div(g->b_strips, SB_PACK_STRIPS);
    size_t kb = chunk / groups;
    size_t strip0 = (chunk % groups) * SB_PACK_STRIPS;
    size_t strip_end = strip0 + SB_PACK_STRIPS < g->b_strips ? strip0 + SB_PACK_STRIPS : g->b_strips;
    size_t kc = k_block_depth(g, kb);
    float *dst = packed_b_block(g, kb) + strip0 * kc * (size_t)g->path->nr;
    pack_b_strips(g, kb * SB_KC, kc, strip0, strip_end, dst);
}

static int is_nan_bits(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

/* Exact mode stores one NaN: the quiet NaN 0x7FC00000. */
static void canonicalize_nans(float *c, ptrdiff_t ldc, size_t rows, size_t cols)
{
    const uint32_t canonical = 0x7fc00000u;
    for (size_t i = 0; i < rows; ++i) {
        uint32_t *row = (uint32_t *)(void *)(c + (ptrdiff_t)i * ldc);
        for (size_t j = 0; j < cols; ++j)
            if (is_nan_bits(row[j])) row[j] = canonical;
    }
}

static void copy_tile(const float *src, ptrdiff_t lds, float *dst, ptrdiff_t ldd, size_t rows,
                      size_t cols)
{
    for (size_t i = 0; i < rows; ++i)
        memcpy(dst + (ptrdiff_t)i * ldd, src + (ptrdiff_t)i * lds, cols * sizeof(float));
}

static void compute_tile(void *ctx, size_t chunk, int thread_index)
{
    const gemm_call *g = ctx;
    const size_t mr = (size_t)g->path->mr, nr = (size_t)g->path->nr;
    const size_t mc = (size_t)g->path->mc, nc = (size_t)g->path->nc;
    /* Tiles that share B columns are adjacent chunks, so concurrent threads
     * read the same packed B strips. */
    size_t tile_n = chunk / g->tiles_m, tile_m = chunk % g->tiles_m;
    size_t i0 = tile_m * mc, rows = g->m - i0 < mc ? g->m - i0 : mc;
    size_t j0 = tile_n * nc, cols = g->n - j0 < nc ? g->n - j0 : nc;
    float *packed_a = g->scratch + (size_t)thread_index * g->scratch_floats;
    float *edge = packed_a + mc * SB_KC;

    for (size_t kb = 0; kb < g->k_blocks; ++kb) {
        size_t kc = k_block_depth(g, kb);
        int accumulate = kb > 0, last = kb + 1 == g->k_blocks;
        pack_a_strips(g, i0, rows, kb * SB_KC, kc, packed_a);
        const float *b_block = packed_b_block(g, kb);
        for (size_t jj = 0; jj < cols; jj += nr) {
            const float *bp = b_block + ((j0 + jj) / nr) * kc * nr;
            size_t live_cols = cols - jj < nr ? cols - jj : nr;
            for (size_t ii = 0; ii < rows; ii += mr) {
                const float *ap = packed_a + (ii / mr) * kc * mr;
                size_t live_rows = rows - ii < mr ? rows - ii : mr;
                float *cp = g->c + (ptrdiff_t)(i0 + ii) * g->ldc + (ptrdiff_t)(j0 + jj);
                if (live_rows == mr && live_cols == nr) {
                    g->ukernel(kc, ap, bp, cp, g->ldc, accumulate);
                } else {
                    /* Ragged edge: the full kernel on a scratch tile. */
                    if (accumulate) copy_tile(cp, g->ldc, edge, (ptrdiff_t)nr, live_rows, live_cols);
                    g->ukernel(kc, ap, bp, edge, (ptrdiff_t)nr, accumulate);
                    copy_tile(edge, (ptrdiff_t)nr, cp, g->ldc, live_rows, live_cols);
                }
                if (last && g->exact) canonicalize_nans(cp, g->ldc, live_rows, live_cols);
            }
        }
    }
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

int sb_sgemm(int path, int mode, int max_threads, size_t m, size_t n, size_t k,
             const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
             const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
             float *c, ptrdiff_t ldc)
{
    if (mode != SB_MODE_FAST && mode != SB_MODE_EXACT) return SB_ERR_ARGUMENT;
    if (max_threads < 1) return SB_ERR_ARGUMENT;
    if (!sb_path_supported(path)) return SB_ERR_PATH;
    if (m == 0 || n == 0) return SB_OK;
    if (!c || (k > 0 && (!a || !b))) return SB_ERR_ARGUMENT;
    if (k == 0) {
        fill_zero(c, ldc, m, n);
        return SB_OK;
    }

    gemm_call g = {0};
    g.path = sb_path_get(path);
    g.exact = mode == SB_MODE_EXACT;
    g.ukernel = g.exact ? g.path->exact : g.path->fast;
    g.m = m, g.n = n, g.k = k;
    g.a = a, g.a_row = a_row, g.a_col = a_col;
    g.b = b, g.b_row = b_row, g.b_col = b_col;
    g.c = c, g.ldc = ldc;
    const size_t nr = (size_t)g.path->nr, mr = (size_t)g.path->mr;
    g.b_strips = ceil_div(n, nr);
    g.k_blocks = ceil_div(k, SB_KC);
    g.tiles_m = ceil_div(m, (size_t)g.path->mc);
    g.tiles_n = ceil_div(n, (size_t)g.path->nc);
    g.scratch_floats = (size_t)g.path->mc * SB_KC + mr * nr + 16; /* 16 keeps 64-byte alignment */

    size_t packed_floats, packed_bytes;
    if (mul_overflows(g.b_strips * nr, k, &packed_floats) ||
        mul_overflows(packed_floats, sizeof(float), &packed_bytes))
        return SB_ERR_NO_MEMORY;

    size_t pack_chunks = g.k_blocks * ceil_div(g.b_strips, SB_PACK_STRIPS);
    size_t tiles = g.tiles_m * g.tiles_n;
    double pack_ns = (double)packed_floats * NS_PER_PACKED;
    double tile_ns = (double)m * (double)n * (double)k * NS_PER_MULADD +
                     (double)m * (double)k * (double)g.tiles_n * NS_PER_PACKED;
    int pack_threads = sb_pool_threads_for(max_threads, pack_ns, pack_chunks);
    int tile_threads = sb_pool_threads_for(max_threads, tile_ns, tiles);

    g.packed_b = sb_alloc_aligned(packed_bytes);
    size_t scratch_bytes = (size_t)tile_threads * g.scratch_floats * sizeof(float);
    g.scratch = sb_alloc_aligned(scratch_bytes);
    if (!g.packed_b || !g.scratch) {
        sb_free_aligned(g.packed_b);
        sb_free_aligned(g.scratch);
        return SB_ERR_NO_MEMORY;
    }

    sb_parallel_run(pack_threads, pack_chunks, pack_b_chunk, &g);
    sb_parallel_run(tile_threads, tiles, compute_tile, &g);

    sb_free_aligned(g.packed_b);
    sb_free_aligned(g.scratch);
    return SB_OK;
}
