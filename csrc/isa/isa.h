/* How an ISA path is described to the framework: the only thing the
 * framework knows about it. Both are plain data with designated initializers
 * in the path's ukernel_<isa>.c.
 *
 * A tile (sb_tile) is one register tile: MR x NR, its cache blocking, its
 * tile kernels, and the packers that write the layouts its kernels read. An
 * ISA (sb_isa) is what a CPU runs: detection, whether fast mode fuses, and
 * one config per operation family (the products' tiles and kernels,
 * depthwise, elementwise). MR and NR are run-time values throughout the framework, so a
 * vector-length-agnostic ISA can fill its tiles when it is detected. */
#ifndef SB_ISA_H
#define SB_ISA_H

#include <stddef.h>
#include "isa/paths.h"
#include "isa/kernels.h"
#include "isa/unary.h"
#include "isa/pool.h"

typedef struct sb_tile sb_tile;

/* Rows [i0, i0 + rows) x columns [p0, p0 + kc) of A into MR-row strips
 * (element (p, r) of a strip at p*MR + r, rows past the end +0). */
typedef void (*sb_pack_a_fn)(const sb_tile *tile, const float *a, ptrdiff_t a_row,
                             ptrdiff_t a_col, size_t i0, size_t rows, size_t p0, size_t kc,
                             float *dst);
/* Strips [strip0, strip_end) of rows [p0, p0 + kc) of B (n columns) into
 * NR-column strips (strip s at dst + (s - strip0)*kc*NR, element (p, j) at
 * p*NR + j, columns past n +0). */
typedef void (*sb_pack_b_fn)(const sb_tile *tile, const float *b, ptrdiff_t b_row,
                             ptrdiff_t b_col, size_t n, size_t p0, size_t kc, size_t strip0,
                             size_t strip_end, float *dst);

/* The widest NR a tile may have: the convolution's patch gatherer keeps the
 * runs of one strip (at most NR) in an array of this size. */
#define SB_MAX_TILE_NR 128

struct sb_tile {
    const char *name;             /* "avx2 6x16" */
    int mr, nr;                   /* register tile, nr <= SB_MAX_TILE_NR */
    int mc, nc;                   /* cache tile: the rows and columns of one chunk */
    int muladds_per_ns;           /* one thread's rate here: the work estimate's unit */
    sb_tile_kernel_fn exact, fast;
    /* The narrow tile: MR x narrow_nr (the first narrow_nr columns of a B
     * strip), for a ragged last strip with at most narrow_nr live columns;
     * used only when narrow_nr < nr. */
    int narrow_nr;
    sb_tile_kernel_fn narrow_exact, narrow_fast;
    /* The same kernels over A read in place (sb_tile_direct_fn). */
    sb_tile_direct_fn direct_exact, direct_fast, narrow_direct_exact, narrow_direct_fast;
    /* Optional (null: convolutions gather their patches): the same kernels
     * over B rows at offsets (sb_tile_offsets_fn). */
    sb_tile_offsets_fn offsets_exact, offsets_fast, narrow_offsets_exact, narrow_offsets_fast;
    /* Optional (null: the tile kernel strip by strip, ragged edges through a
     * scratch tile): every row of packed A down one B strip in one call,
     * edges in place (sb_strips_kernel_fn). */
    sb_strips_kernel_fn strips_exact, strips_fast;
    sb_pack_a_fn pack_a;          /* the layouts the kernels read */
    sb_pack_b_fn pack_b;          /* strip by strip */
    sb_pack_b_fn pack_b_rows;     /* the same layout, read row by row across strips */
};

/* One config per operation family, as XNNPACK's gemm-config, dwconv-config and
 * unary-elementwise-config: a family reads only its own, and a path may
 * point a family at another path's config (a matrix unit without its own
 * depthwise kernels takes the vector path's). */

/* The matrix products: tiles, and the row and few-column kernels, which
 * take a tile's MR or NR at run time. */
typedef struct sb_gemm_config {
    int lanes;                    /* floats per vector of these kernels */
    int max_mr, max_nr;           /* the largest tile its row and column kernels take */
    /* The matrix product's tile per mode (SB_MODE_FAST, SB_MODE_EXACT). Both
     * must have the same NR, since B is packed before the mode is known. */
    const sb_tile *product_tile[2];
    /* The exact product's tile on a CPU that runs each 512-bit operation as
     * two 256-bit halves (sb_cpu_splits_512; null: product_tile's). Its NR
     * is product_tile's. */
    const sb_tile *split_exact_tile;
    /* Other tiles the planner may give a product whose shape they fit with
     * fewer padded rows and columns (small products); null-terminated. With
     * a prepacked B only those of the packing's NR qualify. */
    const sb_tile *other_tiles[4];
    /* Optional: the tile of a product with at most its MR rows (a batch of 2
     * to 4): fewer rows computed than product_tile's. Only there: its
     * fewer accumulators would cost the larger products the padding it saves
     * them. With a prepacked B only when its NR is the packing's. */
    const sb_tile *few_rows_tile;
    /* A convolution's tile for cout_g output channels per group (null: the
     * product's fast tile). A function of cout_g alone: weights are packed
     * before the mode or any input size is known. */
    const sb_tile *(*conv_tile)(size_t cout_g);
    /* The exact convolution's product tile on a CPU that splits 512-bit
     * operations (null: conv_tile's). It reads the weights packed for
     * conv_tile, so it is taken only where its MR is conv_tile's for the
     * layer's cout_g (sb_conv_product_tile). */
    const sb_tile *split_exact_conv_tile;
    int split_lanes;              /* floats per vector of the split tiles */
    /* The convolution's channels-in-lanes kernels (kernels/conv_lanes.c;
     * null: the path has none): SB_LANES_WIDTH lanes, which is conv_tile's
     * MR for every cout_g. lanes_need_split: taken only on a CPU that splits
     * 512-bit operations, where these 256-bit vectors run at full speed. */
    sb_lanes_kernel_fn lanes_exact, lanes_fast;
    sb_lanes_store_fn lanes_store;
    int lanes_need_split;
    /* Optional (null: none): the same kernels over vectors of two strips
     * (SB_LANES_WIDE_STRIPS strips a call), for a CPU that runs 512-bit
     * operations whole, where lanes_* are not taken. */
    sb_lanes_kernel_fn lanes_wide_exact, lanes_wide_fast;
    int row_strips;               /* strips per row-kernel call */
    sb_row_kernel_fn row_exact, row_fast;
    sb_column_kernel_fn column_exact, column_fast;
    /* Optional (null: A packed a k-block at a time for column_*): the
     * few-column product over A's rows read in place. */
    sb_column_direct_fn column_direct_exact, column_direct_fast;
    /* Bias, activation and canonical NaN on a finished piece of C, at this
     * path's vector width (the same bits on every path). */
    sb_epilogue_fn epilogue;
} sb_gemm_config;

/* Depthwise convolution (kernels/depthwise.c). */
typedef struct sb_dwconv_config {
    sb_depthwise_kernel_fn exact, fast;
    sb_dw_flat_fn flat_exact, flat_fast;   /* null: the path has none */
    sb_dw_flat_pair_fn flat_pair_exact, flat_pair_fast;   /* with flat_*, or null */
    sb_dw_flat_masks_fn flat_masks;
    sb_split_stride2_fn split_stride2;     /* null: strided_copy.h's, over vec4 */
    sb_dw_pitched_fn pitched_exact, pitched_fast;   /* null: the path has none */
    /* Channels in the lanes (null: the path has none; all four or none) */
    sb_dw_lanes_fn lanes_exact, lanes_fast;
    sb_dw_lanes_gather_fn lanes_gather;
    sb_dw_lanes_scatter_fn lanes_scatter;
    sb_dw_stride2_fn stride2_exact, stride2_fast;   /* null: the path has none */
} sb_dwconv_config;

/* Elementwise functions of one input (unary.h). */
typedef struct sb_unary_config {
    sb_unary_kernel_fn exact, fast;
    sb_binary_row_fn binary_row;  /* both modes: the operations are exact */
    /* fast mode's softmax of one contiguous row of n >= 1 (the path's own;
     * null: kernels/reduce.c's generic passes) */
    void (*softmax_row_fast)(const float *x, float *y, size_t n);
    /* the serial sums of rows (1 to 16) of n floats, n apart, from +0 in
     * increasing j; with mean, of (x - mean[r])^2 (every path has them:
     * unary_template.h) */
    void (*row_sums)(const float *x, size_t rows, size_t n, const float *mean, float *acc);
} sb_unary_config;

/* What a CPU runs: detection, whether fast mode fuses, and a config per
 * family (all null when the path is not built). */
typedef struct sb_isa {
    const char *name;
    int (*supported)(void);       /* can this CPU run it (null: not built) */
    int fused;                    /* fast mode uses fused multiply-add */
    const sb_gemm_config *gemm;
    const sb_dwconv_config *dwconv;
    const sb_unary_config *unary;
    const sb_pool_config *pool;
} sb_isa;

/* Each path's descriptor (its ukernel_<path>.c), elementwise config (its
 * unary_<path>.c) and max pooling kernels (its pool_<path>.c), for every
 * path of SB_ISA_PATHS (isa/paths.h, from csrc/build.json). */
#define SB_ISA_DECLARE(name)                                                   \
    extern const sb_isa sb_isa_##name;                                         \
    extern const sb_unary_config sb_unary_config_##name;                       \
    extern const sb_pool_config sb_pool_config_##name;
SB_ISA_PATHS(SB_ISA_DECLARE)
#undef SB_ISA_DECLARE

/* The ISA of path index `path` (dispatch.c), or null for a bad index. */
const sb_isa *sb_isa_get(int path);
/* The ISA of a supported path, or null (not built, not runnable, bad index). */
const sb_isa *sb_isa_supported(int path);

/* The product's tile for a mode: product_tile[mode], or split_exact_tile in
 * exact mode when splits_512 (the CPU fact, passed in so that tests can give
 * either answer). */
const sb_tile *sb_mode_product_tile(const sb_gemm_config *gemm, int mode, int splits_512);

/* The tile a convolution with cout_g channels per group uses: the weights'
 * packing, and the product's in fast mode. */
const sb_tile *sb_conv_tile(const sb_gemm_config *gemm, size_t cout_g);
/* The convolution's product tile for a mode, given its packing tile
 * `packed` (sb_conv_tile's) and the CPU fact splits_512. */
const sb_tile *sb_conv_product_tile(const sb_gemm_config *gemm, const sb_tile *packed, int mode,
                                    int splits_512);

/* The generic packers every tile of this build uses (pack.c). */
void sb_pack_a_strips(const sb_tile *tile, const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
                      size_t i0, size_t rows, size_t p0, size_t kc, float *dst);
void sb_pack_b_strips(const sb_tile *tile, const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
                      size_t n, size_t p0, size_t kc, size_t strip0, size_t strip_end, float *dst);
void sb_pack_b_rows(const sb_tile *tile, const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
                    size_t n, size_t p0, size_t kc, size_t strip0, size_t strip_end, float *dst);

#define SB_KC 256            /* k-block depth of packed B and A */

/* Prepacked A (convolution weights): for each block of SB_KC columns, strips
 * of MR rows; block kb starts at kb * SB_KC * ceil(m / MR) * MR, strip s of
 * it at s * kc * MR. */
size_t sb_packed_a_floats(const sb_tile *tile, size_t m, size_t k);
/* The columns the tile computes for n: whole NR-column strips, a ragged last
 * strip of at most narrow_nr columns counted at that width (the narrow tile). */
size_t sb_tile_computed_cols(const sb_tile *tile, size_t n);
void sb_pack_a_whole(const sb_tile *tile, size_t m, size_t k, const float *a, ptrdiff_t a_row,
                     ptrdiff_t a_col, float *dst);
/* One k-block of it (block kb of a whole packing). */
void sb_pack_a_block(const sb_tile *tile, size_t m, size_t k, size_t kb, const float *a,
                     ptrdiff_t a_row, ptrdiff_t a_col, float *dst);

/* Prepacked B: strips of NR padded to a multiple of the ISA's row_strips. */
size_t sb_packed_b_strips(const sb_gemm_config *gemm, const sb_tile *tile, size_t n);
/* Floats of a whole packed B into *floats; 0 on overflow (far beyond memory). */
int sb_packed_b_floats(const sb_gemm_config *gemm, const sb_tile *tile, size_t k, size_t n,
                       size_t *floats);

#endif
