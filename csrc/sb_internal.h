/* Internal interfaces shared by the framework, the paths and the pool. */
#ifndef SB_INTERNAL_H
#define SB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Tile microkernel. ap is an MR-row strip of packed A (element (p, r) at
 * p*MR + r); bp holds kc rows of NR values of B, row p at bp + p*b_step
 * (b_step is NR for a packed strip, the row stride for B read in place). The
 * kernel updates the full MR x NR tile at c (row stride ldc): it starts from
 * +0 when accumulate is 0, else from the values in c, and adds the kc
 * products of each output in increasing p. */
typedef void (*sb_ukernel_fn)(size_t kc, const float *ap, const float *bp, ptrdiff_t b_step,
                              float *c, ptrdiff_t ldc, int accumulate);

/* Row microkernel for a product with one row of A (matrix-vector): the
 * 1 x (ROW_STRIPS*NR) outputs at c (contiguous) of A values a[p*a_step] and
 * ROW_STRIPS strips of B, strip s row p at bp + s*strip_step + p*b_step. Same
 * accumulate rule and the same per-output order and operations as the tile
 * kernel, hence the same bits. */
typedef void (*sb_row_kernel_fn)(size_t kc, const float *a, ptrdiff_t a_step, const float *bp,
                                 ptrdiff_t b_step, ptrdiff_t strip_step, float *c,
                                 int accumulate);

/* Depthwise convolution rows (depthwise.c): for r < rows and x < cols,
 * out[r*out_row + x] = the sum over taps t = 0, 1, ..., taps-1 of
 * w[t] * in[r*in_row + off[t] + x], from +0, one multiply and one add per tap
 * in increasing t (fused in fast mode on a fused path). Lanes hold different
 * x. The kernel may read, and not use, up to 15 floats past the last column
 * of each row it reads. */
typedef void (*sb_dw_kernel_fn)(size_t rows, size_t cols, size_t taps, const float *w,
                                const ptrdiff_t *off, const float *in, ptrdiff_t in_row,
                                float *out, ptrdiff_t out_row);

/* Single-column product (a 1x1 convolution over a 1x1 input, with packed
 * weights): y[r] for r < rows = the sum over p < kc of A(r, p) * x[p], where
 * A is rows of consecutive MR-row strips of one k-block of packed A (strip s
 * at ap + s*kc*MR, element (p, r) at p*MR + r). Each output starts from +0,
 * or from y[r] when accumulate, and adds its products in increasing p with
 * the tile kernel's operations, hence its bits. */
typedef void (*sb_mv_kernel_fn)(size_t kc, size_t rows, const float *ap, const float *x,
                                float *y, int accumulate);

/* One ISA path: the only thing the framework knows about it. */
typedef struct sb_path_desc sb_path_desc;
struct sb_path_desc {
    const char *name;
    int mr, nr;              /* register tile */
    int mc, nc;              /* cache tile: one chunk of compute work */
    int row_strips;          /* B strips per row-kernel call */
    int muladds_per_ns;      /* one thread's tile rate: the work estimate's unit */
    int fused;               /* fast mode uses fused multiply-add */
    sb_ukernel_fn exact;     /* null when the path is not built */
    sb_ukernel_fn fast;
    sb_row_kernel_fn row_exact;
    sb_row_kernel_fn row_fast;
    int (*supported)(void);  /* can this CPU run it */
    sb_dw_kernel_fn dw_exact;  /* depthwise convolution rows */
    sb_dw_kernel_fn dw_fast;
    /* The register tile of a convolution with cout_g output channels per
     * group: another entry of the same path (its vector width, fusing and
     * depthwise kernels, another MR x NR), or null for this entry's own.
     * A function of cout_g alone: weights are packed before any input size
     * is known. */
    const sb_path_desc *(*conv_tile)(size_t cout_g);
    sb_mv_kernel_fn mv_exact;  /* single-column product of this tile */
    sb_mv_kernel_fn mv_fast;
    /* The narrow tile: MR x narrow_nr (the first narrow_nr columns of a B
     * strip), for a ragged last strip with at most narrow_nr live columns;
     * used only when narrow_nr < nr. */
    int narrow_nr;
    sb_ukernel_fn narrow_exact;
    sb_ukernel_fn narrow_fast;
};

extern const sb_path_desc sb_path_scalar, sb_path_vec4, sb_path_avx2,
    sb_path_avx512, sb_path_neon;
const sb_path_desc *sb_path_get(int path);

/* Floating-point environment for kernels: round to nearest, no flush-to-zero,
 * no denormals-are-zero. Saved and restored by every thread that runs chunks. */
typedef struct { uint64_t saved; } sb_fpenv;
void sb_fpenv_enter(sb_fpenv *env);
void sb_fpenv_leave(const sb_fpenv *env);

/* Fixed-chunk parallel-for. A chunk's work never depends on which thread or
 * how many threads run it; thread_index only picks a scratch buffer. */
typedef void (*sb_chunk_fn)(void *ctx, size_t chunk, int thread_index);
/* Threads worth waking for est_ns of single-thread work: one per 80 us. */
int sb_pool_threads_for(int max_threads, double est_ns, size_t nchunks);
void sb_parallel_run(int nthreads, size_t nchunks, sb_chunk_fn fn, void *ctx);

void *sb_alloc_aligned(size_t bytes);
void sb_free_aligned(void *p);
/* A 64-byte aligned buffer for one call on the calling thread: reused between
 * calls when small (workspace.c). Release it before the call returns. */
void *sb_workspace_get(size_t bytes);
void sb_workspace_release(void *p);

/* Writes strips [strip0, strip_end) of rows [p0, p0 + kc) of a B operand in
 * the packed layout (strip s at dst + (s - strip0)*kc*nr, element (p, j) at
 * p*nr + j, columns past n as +0). The convolution gathers its patches
 * straight into packed strips through one of these. */
typedef void (*sb_b_gather_fn)(const void *ctx, size_t p0, size_t kc, size_t strip0,
                               size_t strip_end, size_t nr, float *dst);

/* One blocked product C = A * B, the framework's whole input. A is given by
 * (a, a_row, a_col) or prepacked (packed_a, sb_pack_a's layout); B by
 * (b, b_row, b_col), prepacked (packed_b, sb_pack_b's layout) or through a
 * gatherer, which needs A prepacked. row_bias (m values or null) and activation form the epilogue of
 * each finished tile (epilogue.c). */
typedef struct {
    int path, mode, max_threads;
    const sb_path_desc *tile;   /* the register tile: null for the path's own */
    size_t m, n, k;
    const float *a;
    ptrdiff_t a_row, a_col;
    const float *packed_a;
    const float *b;
    ptrdiff_t b_row, b_col;
    const float *packed_b;
    sb_b_gather_fn gather_b;
    const void *gather_ctx;
    float *c;
    ptrdiff_t ldc;
    const float *row_bias;
    int activation;
} sb_gemm_args;
int sb_gemm_run(const sb_gemm_args *args);

/* Prepacked A (convolution weights): for each block of SB_KC columns, strips
 * of MR rows (element (p, r) at p*MR + r, rows past m as +0); block kb starts
 * at kb * SB_KC * ceil(m / MR) * MR, strip s of it at s * kc * MR. */
size_t sb_packed_a_floats(const sb_path_desc *path, size_t m, size_t k);
void sb_pack_a(const sb_path_desc *path, size_t m, size_t k, const float *a, ptrdiff_t a_row,
               ptrdiff_t a_col, float *dst);

#define SB_KC 256            /* k-block depth of packed B and A */
#define SB_PACK_STRIPS 8     /* B strips per packing chunk */

#endif
