/* Plan, then execute: the executor (loops.c) runs one chunk of a planned
 * product; the driver (driver.c) runs the chunks of every product of a call
 * (the entries of a batch, a convolution's images and groups) in one parallel
 * run per phase, so that small products share the threads.
 *
 * A call is `count` products of one shape and one plan (tiling.h). The driver
 * cuts them into waves when the packed operands of all of them would not fit
 * its workspace bound; a wave's products are prepared (A and/or B packed
 * whole, when the plan says so) in one parallel run, then computed in
 * another. Product i's chunks are numbered i * chunks_per_product + j, so the
 * chunks of one product are neighbours. None of this depends on the thread
 * count, and every chunk computes what it computes alone. */
#ifndef SB_DRIVER_H
#define SB_DRIVER_H

#include <stddef.h>
#include "framework/tiling.h"
#include "samebits.h"

/* One product's memory. A is plain (a, a_row, a_col) or packed in the tile's
 * layout (packed_a); B is plain (b, b_row, b_col), prepacked (packed_b), or
 * the source a gatherer reads (b). */
typedef struct {
    const float *a;
    ptrdiff_t a_row, a_col;
    const float *packed_a;
    const float *b;
    ptrdiff_t b_row, b_col;
    const float *packed_b;
    float *c;
    ptrdiff_t ldc;                /* C's column stride is 1 */
    const float *row_bias;        /* m values, or null */
    const float *col_bias;        /* n values, or null */
    /* a convolution's fused steps (sb_epilogue_ops): 4 floats per row of C,
     * and a residual in C's layout (ldc), or null */
    const float *row_affine;
    const float *residual;
    /* SB_B_OFFSETS: row p of B's columns from j at b + b_off[p] + j, and the
     * columns are wide: column j is output row j / wide_w, column
     * j % wide_w, live only below out_w (the rest read past a row's end and
     * are never stored). C holds the live ones, out_w to a row. */
    const ptrdiff_t *b_off;
    size_t wide_w, out_w;
} sb_operands;

/* Writes strips [strip0, strip_end) of rows [p0, p0 + kc) of the product's B
 * in the packed layout of `tile` (see sb_pack_b_fn): a convolution gathers
 * its patches straight into packed strips through one of these. */
typedef void (*sb_gather_fn)(const void *ctx, const sb_operands *ops, const sb_tile *tile,
                             size_t p0, size_t kc, size_t strip0, size_t strip_end, float *dst);

typedef struct {
    const sb_product_plan *plan;
    int64_t activation;           /* as sb_matmul_args.activation, after the bias */
    int max_threads;
    sb_gather_fn gather;          /* for SB_B_GATHERED; null otherwise */
    const void *gather_ctx;
    /* Fills product i's operands (i < plan->count). */
    void (*operands)(const void *ctx, size_t i, sb_operands *ops);
    const void *operands_ctx;
} sb_product_run;

/* Runs every product; SB_OK or SB_ERR_NO_MEMORY. */
int sb_run_products(const sb_product_run *run);

/* What sb_run_products would do, without doing it. */
void sb_describe_products(const sb_product_run *run, int path, sb_plan_info *info);

/* ---- the executor (loops.c) --------------------------------------------- */

/* Product memory the prepare phase writes: packed A and/or packed B. */
typedef struct {
    sb_operands ops;
    float *packed_a;              /* the plan packs A here (plan->pack_a) */
    float *packed_b;              /* ... and B here (SB_B_PACKED_WHOLE) */
} sb_product_state;

void sb_exec_prepare(const sb_product_run *run, const sb_product_state *state, size_t chunk);
void sb_exec_compute(const sb_product_run *run, const sb_product_state *state, size_t chunk,
                     float *scratch);

#endif
