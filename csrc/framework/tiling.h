/* The planner: a pure function from a product's shape to what will run.
 *
 * Given the ISA, the mode, the thread budget and a product's description
 * (shape, strides, how A and B come, how many products of that shape the call
 * has), sb_plan_product decides the route, the tile, the B source, the chunk
 * counts of the two phases, the workspace sizes and the work estimate. It
 * allocates nothing and has no side effects, so the tests can call it on any
 * shape. Chunks are functions of the shape, the ISA and the build only: the
 * thread budget decides how many threads wake (plan.threads), never what a
 * chunk computes, and k is never split between chunks. */
#ifndef SB_PLAN_H
#define SB_PLAN_H

#include <stddef.h>
#include "isa/isa.h"
#include "samebits.h"

/* How B reaches the planner. */
enum sb_b_form {
    SB_B_MATRIX = 0,      /* a matrix with element strides (b_row, b_col) */
    SB_B_PACKED = 1,      /* sb_pack_b's layout for this ISA and tile */
    SB_B_GATHERED = 2,    /* written into packed strips by a gatherer (convolution patches) */
    SB_B_OFFSETS = 3,     /* row p of a strip at b + b_off[p] + the strip's first column:
                           * read in place by the tile's offsets kernels (sb_operands) */
};

typedef struct {
    size_t m, n, k;
    ptrdiff_t a_row, a_col;       /* A's strides when not packed: whether to read it in place */
    ptrdiff_t b_row, b_col;       /* for SB_B_MATRIX: whether reading in place pays */
    int b_form;                   /* enum sb_b_form */
    int a_packed;                 /* A comes packed in the tile's layout (weights) */
    size_t count;                 /* products of this shape in the call (>= 1) */
    const sb_tile *tile;          /* the tile to use, or null for the ISA's product tile */
} sb_product_desc;

typedef struct {
    int route;                    /* enum sb_route */
    int b_source;                 /* enum sb_b_source */
    int pack_a;                   /* A is packed once per product in the prepare phase */
    int direct_a;                 /* the tile kernels read A in place (whole MR-row strips) */
    int exact;
    const sb_gemm_config *gemm;
    const sb_tile *tile;
    sb_tile_kernel_fn kernel, narrow_kernel;  /* narrow: null when not narrower */
    sb_tile_direct_fn direct_kernel, narrow_direct_kernel;
    sb_tile_offsets_fn offsets_kernel, narrow_offsets_kernel;   /* SB_B_BY_OFFSETS */
    sb_strips_kernel_fn strips_kernel;         /* null: none */
    sb_row_kernel_fn row_kernel;
    sb_column_kernel_fn column_kernel;         /* SB_ROUTE_COLUMN: over A packed per k-block, */
    sb_column_direct_fn column_direct;         /* or over A read in place (null: not) */
    /* SB_ROUTE_COLUMN over the transposed product C^T = B^T A^T: A has a few
     * rows and B's columns are contiguous, so B's columns are the rows the
     * kernel reads in place and A's rows its few vectors. m, n below are
     * the transposed product's (the call's n, m); the executor writes C and
     * finishes it in the call's orientation. */
    int swapped;
    size_t m, n, k, count;
    size_t mc, nc;                /* cache tile (rows, columns) of one TILES chunk */
    size_t tiles_m, tiles_n, k_blocks;
    size_t b_strips;              /* strips of the packed layout (padded to row groups) */
    size_t row_cols;              /* outputs per row-kernel call */
    size_t row_chunk_cols;        /* SB_ROUTE_ROW: outputs per chunk (whole row_cols groups) */
    size_t panel_strips;          /* B strips of one PANELS chunk */
    size_t column_rows;           /* rows of C per COLUMN chunk (whole MR-row strips if packed) */
    /* Per product: prepare chunks pack A (one per k-block) and/or pack B
     * whole (k-block x group of 8 strips); compute chunks are tiles, panels
     * or row groups. */
    size_t prepare_chunks, compute_chunks;
    size_t packed_a_floats, packed_b_floats;   /* per product, prepare phase output */
    size_t scratch_floats;        /* per thread, 64-byte multiple */
    double prepare_ns, compute_ns;             /* one thread, all products */
} sb_product_plan;

/* Returns SB_OK, or SB_ERR_NO_MEMORY when the sizes overflow. */
int sb_plan_product(const sb_gemm_config *gemm, int mode, const sb_product_desc *desc,
                    sb_product_plan *plan);

#define SB_PACK_STRIPS 8       /* B strips per packing chunk */
#define SB_PANEL_STRIPS 8      /* B strips per panel */
#define SB_ROW_GROUPS_PER_CHUNK 16   /* at most, per row-route chunk */
#define SB_COLUMN_CHUNK_ROWS 64   /* rows of C per COLUMN chunk, rounded down to MR */
#define SB_NS_PER_PACKED 0.5   /* per element packed, copied, gathered or streamed */

#endif
