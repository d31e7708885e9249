/* The executor: one chunk of a planned product (driver.h).
 *
 * The loops are Goto and van de Geijn's. A TILES chunk is an MC x NC tile of
 * C: for each k-block it packs its rows of A into MR-row strips (unless A is
 * packed already) and runs the tile kernel over every (A strip, B strip)
 * pair, B coming prepacked, packed whole by the prepare phase, or read in
 * place. A PANELS chunk is a panel of B strips and every row of packed A: for
 * each k-block it packs (or gathers) its panel into scratch and runs every
 * row of A over each strip while the strip is in the first-level cache. A ROW
 * chunk is a run of column groups of a one-row product, streamed by the row
 * kernel. Block kb > 0 continues from the values block kb - 1 stored, so
 * every output sums its k products in increasing order from +0, whatever the
 * route, tile or chunk.
 *
 * This file never learns which ISA runs: it reads MR, NR, MC and the kernels
 * from the plan's tile and ISA. */
#include <string.h>
#include "framework/driver.h"
#include "framework/checked.h"
#include "framework/memory.h"

/* Per-thread scratch: the A block of one tile, a packed edge group of B, an
 * edge tile of C, and a panel (or strip) of B. Sizes as tiling.c's
 * scratch_floats. */
typedef struct { float *packed_a, *edge_b, *edge_c, *panel; } scratch_layout;

static scratch_layout scratch_for(const sb_product_plan *plan, float *scratch)
{
    const size_t nr = (size_t)plan->tile->nr, strips = (size_t)plan->gemm->row_strips;
    scratch_layout s;
    s.packed_a = scratch;
    s.edge_b = s.packed_a + plan->mc * SB_KC;
    s.edge_c = s.edge_b + (size_t)SB_KC * strips * nr;
    s.panel = s.edge_c + (size_t)plan->tile->mr * nr + strips * nr;
    return s;
}

static size_t k_block_depth(size_t k, size_t kb) { return sb_min_size(k - kb * SB_KC, SB_KC); }

static size_t packed_block_offset(const sb_product_plan *plan, size_t kb)
{
    return kb * SB_KC * plan->b_strips * (size_t)plan->tile->nr;
}

/* The product's packed A and B: the caller's, or what the prepare phase wrote. */
static const float *packed_a_of(const sb_product_state *state)
{
    return state->packed_a ? state->packed_a : state->ops.packed_a;
}

static const float *packed_b_of(const sb_product_state *state)
{
    return state->packed_b ? state->packed_b : state->ops.packed_b;
}

/* A finished piece of C (rows from `row`, columns from `col`): bias, a
 * convolution's fused steps, activation and the canonical NaN, at the path's
 * vector width. c is the piece in C itself. The tile and panel routes finish
 * a whole chunk after its last k-block (still in the second-level cache), not
 * each register tile: per tile, the call and each 2-vector row's loop setup
 * cost as much as the work. */
static sb_epilogue_ops epilogue_at(const sb_product_run *run, const sb_operands *ops, size_t row,
                                   size_t col, const float *residual)
{
    const sb_epilogue_ops e = {
        .row_bias = ops->row_bias ? ops->row_bias + row : NULL,
        .col_bias = ops->col_bias ? ops->col_bias + col : NULL,
        .row_affine = ops->row_affine ? ops->row_affine + 4 * row : NULL,
        .residual = residual, .activation = run->activation, .fast = !run->plan->exact};
    return e;
}

static void finish_outputs(const sb_product_run *run, const sb_operands *ops, float *c,
                           size_t row, size_t col, size_t rows, size_t cols)
{
    const sb_epilogue_ops e =
        epilogue_at(run, ops, row, col, ops->residual ? ops->residual + (c - ops->c) : NULL);
    run->plan->gemm->epilogue(c, ops->ldc, rows, cols, &e);
}

/* Strips [strip0, strip_end) of k-block rows [p0, p0 + kc) of the product's
 * B in the packed layout: gathered, or packed from the plain matrix strip by
 * strip or (panels of a plain B) row by row across the strips. */
static void fill_b(const sb_product_run *run, const sb_operands *ops, int by_rows, size_t p0,
                   size_t kc, size_t strip0, size_t strip_end, float *dst)
{
    const sb_tile *tile = run->plan->tile;
    if (run->gather)
        run->gather(run->gather_ctx, ops, tile, p0, kc, strip0, strip_end, dst);
    else if (by_rows)
        tile->pack_b_rows(tile, ops->b, ops->b_row, ops->b_col, run->plan->n, p0, kc, strip0,
                          strip_end, dst);
    else
        tile->pack_b(tile, ops->b, ops->b_row, ops->b_col, run->plan->n, p0, kc, strip0,
                     strip_end, dst);
}

void sb_exec_prepare(const sb_product_run *run, const sb_product_state *state, size_t chunk)
{
    const sb_product_plan *plan = run->plan;
    const sb_operands *ops = &state->ops;
    if (plan->pack_a) {   /* the first k_blocks chunks: one k-block of A each */
        if (chunk < plan->k_blocks) {
            sb_pack_a_block(plan->tile, plan->m, plan->k, chunk, ops->a, ops->a_row, ops->a_col,
                            state->packed_a);
            return;
        }
        chunk -= plan->k_blocks;
    }
    const size_t nr = (size_t)plan->tile->nr;
    const size_t groups = sb_ceil_div(plan->b_strips, SB_PACK_STRIPS);
    const size_t kb = chunk / groups, strip0 = chunk % groups * SB_PACK_STRIPS;
    const size_t strip_end = sb_min_size(strip0 + SB_PACK_STRIPS, plan->b_strips);
    const size_t kc = k_block_depth(plan->k, kb);
    fill_b(run, ops, 0, kb * SB_KC, kc, strip0, strip_end,
           state->packed_b + packed_block_offset(plan, kb) + strip0 * kc * nr);
}

static void copy_tile(const float *src, ptrdiff_t lds, float *dst, ptrdiff_t ldd, size_t rows,
                      size_t cols)
{
    for (size_t i = 0; i < rows; ++i)
        memcpy(dst + (ptrdiff_t)i * ldd, src + (ptrdiff_t)i * lds, cols * sizeof(float));
}

/* Where the tile kernels find the A strips of rows [i0, i0 + rows) for one
 * k-block from p0: a packed block (strip s at block + s*kc*MR), or A read in
 * place (plan->direct_a), whose whole MR-row strips the direct kernels read
 * where they are while a ragged last strip is packed into `block` (strip 0). */
typedef struct {
    const float *block;
    const float *a;               /* element (i0, p0) of A when read in place */
    ptrdiff_t a_row, a_col;
    size_t whole_rows;            /* rows read in place: whole strips */
} a_strips;

/* A block of rows [i0, i0 + rows) for k-block rows [p0, p0 + kc): packed
 * (prepacked, or packed here into scratch) or read in place. */
static a_strips a_block_for(const sb_product_run *run, const sb_product_state *state,
                            scratch_layout s, size_t i0, size_t rows, size_t kb, size_t kc)
{
    const sb_product_plan *plan = run->plan;
    const sb_operands *ops = &state->ops;
    const sb_tile *tile = plan->tile;
    const size_t mr = (size_t)tile->mr, p0 = kb * SB_KC;
    const float *packed_a = packed_a_of(state);
    a_strips strips = {s.packed_a, NULL, 0, 0, 0};
    if (packed_a) {   /* tiles start on whole strips: MC is a multiple of MR */
        strips.block = packed_a + kb * SB_KC * sb_ceil_div(plan->m, mr) * mr + (i0 / mr) * kc * mr;
    } else if (plan->direct_a) {
        strips.a = ops->a + (ptrdiff_t)i0 * ops->a_row + (ptrdiff_t)p0 * ops->a_col;
        strips.a_row = ops->a_row, strips.a_col = ops->a_col;
        strips.whole_rows = rows / mr * mr;
        if (strips.whole_rows < rows)
            tile->pack_a(tile, ops->a, ops->a_row, ops->a_col, i0 + strips.whole_rows,
                         rows - strips.whole_rows, p0, kc, s.packed_a);
    } else {
        tile->pack_a(tile, ops->a, ops->a_row, ops->a_col, i0, rows, p0, kc, s.packed_a);
    }
    return strips;
}

/* The tile kernel down one strip of B (kc rows at bp, row step b_step, the
 * live_cols columns from `col`) and the A strips for rows [i0, i0 + rows);
 * ragged edges run the kernel on a scratch tile, unless the tile has a
 * strips kernel and A is packed. */
static void run_strip(const sb_product_run *run, const sb_operands *ops, scratch_layout s,
                      size_t kc, const a_strips *a, const float *bp, ptrdiff_t b_step,
                      size_t i0, size_t rows, size_t col, size_t live_cols, int accumulate,
                      int last)
{
    const sb_product_plan *plan = run->plan;
    const size_t mr = (size_t)plan->tile->mr, nr = (size_t)plan->tile->nr;
    const int narrow = plan->narrow_kernel && live_cols <= (size_t)plan->tile->narrow_nr;
    for (size_t ii = 0; ii < rows; ii += mr) {
        size_t live_rows = sb_min_size(rows - ii, mr);
        /* every remaining row of packed A in one call where the tile has a
         * strips kernel, ragged edges in place (the same bits as one call
         * per tile) */
        if (plan->strips_kernel && ii >= a->whole_rows) {
            float *cp = ops->c + (ptrdiff_t)(i0 + ii) * ops->ldc + (ptrdiff_t)col;
            const float *ap = a->block + ((ii - a->whole_rows) / mr) * kc * mr;
            plan->strips_kernel(rows - ii, live_cols, kc, ap, bp, b_step, cp, ops->ldc,
                                accumulate);
            break;
        }
        float *cp = ops->c + (ptrdiff_t)(i0 + ii) * ops->ldc + (ptrdiff_t)col;
        if (last && ops->residual)
            sb_prefetch_rows(ops->residual + (cp - ops->c), ops->ldc, live_rows, live_cols);
        const int whole = live_rows == mr && live_cols == nr;
        float *out = whole ? cp : s.edge_c;   /* a ragged edge goes through a tile buffer */
        ptrdiff_t ldo = whole ? ops->ldc : (ptrdiff_t)nr;
        if (!whole && accumulate) copy_tile(cp, ops->ldc, s.edge_c, (ptrdiff_t)nr, live_rows,
                                            live_cols);
        if (ii < a->whole_rows) {
            const float *ap = a->a + (ptrdiff_t)ii * a->a_row;
            (narrow ? plan->narrow_direct_kernel : plan->direct_kernel)(
                kc, ap, a->a_row, a->a_col, bp, b_step, out, ldo, accumulate);
        } else {
            const float *ap = a->block + ((ii - a->whole_rows) / mr) * kc * mr;
            (narrow ? plan->narrow_kernel : plan->kernel)(kc, ap, bp, b_step, out, ldo,
                                                          accumulate);
        }
        if (!whole) copy_tile(s.edge_c, (ptrdiff_t)nr, cp, ops->ldc, live_rows, live_cols);
    }
}

static void compute_tile(const sb_product_run *run, const sb_product_state *state, size_t chunk,
                         scratch_layout s)
{
    const sb_product_plan *plan = run->plan;
    const sb_operands *ops = &state->ops;
    const sb_tile *tile = plan->tile;
    const size_t nr = (size_t)tile->nr;
    const size_t mc = plan->mc, nc = plan->nc;
    /* Tiles that share B columns are adjacent chunks, so concurrent threads
     * read the same B strips. */
    const size_t tile_n = chunk / plan->tiles_m, tile_m = chunk % plan->tiles_m;
    const size_t i0 = tile_m * mc, rows = sb_min_size(plan->m - i0, mc);
    const size_t j0 = tile_n * nc, cols = sb_min_size(plan->n - j0, nc);
    const float *packed_b = packed_b_of(state);

    for (size_t kb = 0; kb < plan->k_blocks; ++kb) {
        const size_t kc = k_block_depth(plan->k, kb);
        const int accumulate = kb > 0, last = kb + 1 == plan->k_blocks;
        const a_strips a = a_block_for(run, state, s, i0, rows, kb, kc);
        for (size_t jj = 0; jj < cols; jj += nr) {
            const size_t strip = (j0 + jj) / nr, live_cols = sb_min_size(cols - jj, nr);
            const float *bp;
            ptrdiff_t b_step;
            if (packed_b) {
                bp = packed_b + packed_block_offset(plan, kb) + strip * kc * nr;
                b_step = (ptrdiff_t)nr;
            } else if (live_cols == nr) {   /* B read in place */
                bp = ops->b + (ptrdiff_t)(kb * SB_KC) * ops->b_row + (ptrdiff_t)(j0 + jj);
                b_step = ops->b_row;
            } else {   /* the ragged last strip of B read in place: pack it */
                fill_b(run, ops, 0, kb * SB_KC, kc, strip, strip + 1, s.edge_b);
                bp = s.edge_b;
                b_step = (ptrdiff_t)nr;
            }
            run_strip(run, ops, s, kc, &a, bp, b_step, i0, rows, j0 + jj, live_cols,
                      accumulate, last);
        }
    }
    finish_outputs(run, ops, ops->c + (ptrdiff_t)i0 * ops->ldc + (ptrdiff_t)j0, i0, j0, rows, cols);
}

/* A panel read by offsets (SB_B_BY_OFFSETS): columns [j0, j0 + cols) of
 * every row of packed A, for each k-block every strip read where it is,
 * the tiles written whole into the panel's C in scratch (ceil(m/MR)*MR rows
 * of panel_strips*NR columns: no edge ever goes through a tile buffer); at
 * the end the live part of each output row the panel's wide columns cross
 * is copied to C and finished there. */
static void offsets_panel(const sb_product_run *run, const sb_product_state *state,
                          scratch_layout s, size_t j0, size_t cols)
{
    const sb_product_plan *plan = run->plan;
    const sb_operands *ops = &state->ops;
    const size_t mr = (size_t)plan->tile->mr, nr = (size_t)plan->tile->nr;
    const ptrdiff_t ldp = (ptrdiff_t)(plan->panel_strips * nr);
    /* Wide rows that are the output rows (no column thrown away: rows of a
     * single column, or no padding across) and a whole strip: its tiles go
     * straight to C, whose rows hold them (whole tiles of MR rows: the rows
     * of packed A are MR-padded, C's are not, so only whole strips of rows
     * that exist). The rest goes through the panel and is copied. */
    const int in_c = ops->wide_w == ops->out_w;
    const size_t whole_cols = in_c ? (cols / nr) * nr : 0;
    const size_t whole_rows = plan->m / mr * mr;
    for (size_t kb = 0; kb < plan->k_blocks; ++kb) {
        const size_t kc = k_block_depth(plan->k, kb);
        const a_strips a = a_block_for(run, state, s, 0, plan->m, kb, kc);
        const ptrdiff_t *b_off = ops->b_off + kb * SB_KC;
        for (size_t jj = 0; jj < cols; jj += nr) {
            const int narrow = plan->narrow_offsets_kernel &&
                               cols - jj <= (size_t)plan->tile->narrow_nr;
            const sb_tile_offsets_fn kernel = narrow ? plan->narrow_offsets_kernel
                                                     : plan->offsets_kernel;
            for (size_t ii = 0; ii < plan->m; ii += mr) {
                const int to_c = jj < whole_cols && ii < whole_rows;
                float *dst = to_c ? ops->c + (ptrdiff_t)ii * ops->ldc + (ptrdiff_t)(j0 + jj)
                                  : s.panel + (ptrdiff_t)ii * ldp + (ptrdiff_t)jj;
                kernel(kc, a.block + (ii / mr) * kc * mr, ops->b + (j0 + jj), b_off, dst,
                       to_c ? ops->ldc : ldp, kb > 0);
            }
        }
    }
    if (in_c) {   /* the rows and columns not in whole tiles, then the whole panel */
        if (whole_rows < plan->m)
            copy_tile(s.panel + (ptrdiff_t)whole_rows * ldp, ldp,
                      ops->c + (ptrdiff_t)whole_rows * ops->ldc + (ptrdiff_t)j0, ops->ldc,
                      plan->m - whole_rows, whole_cols);
        if (whole_cols < cols)
            copy_tile(s.panel + (ptrdiff_t)whole_cols, ldp, ops->c + (ptrdiff_t)(j0 + whole_cols),
                      ops->ldc, plan->m, cols - whole_cols);
        finish_outputs(run, ops, ops->c + (ptrdiff_t)j0, 0, j0, plan->m, cols);
        return;
    }
    /* Steps that read only the row (bias, BatchNormalization, activation)
     * finish the panel where it is, in cache, before the copy: one pass over
     * the output instead of a copy and a second pass (a stem's 3 MB of
     * outputs). The thrown-away columns are finished too and never copied.
     * The same operations on the same values, so the same bits. A residual
     * or a column bias is read at the output's place: those finish in C. */
    const int in_panel = !ops->residual && !ops->col_bias;
    if (in_panel) {
        const sb_epilogue_ops e = epilogue_at(run, ops, 0, j0, NULL);
        plan->gemm->epilogue(s.panel, ldp, plan->m, cols, &e);
    }
    for (size_t j = j0; j < j0 + cols;) {   /* row by row: the live columns */
        const size_t x = j % ops->wide_w;
        const size_t span = sb_min_size(ops->wide_w - x, j0 + cols - j);
        if (x < ops->out_w) {
            const size_t to = j / ops->wide_w * ops->out_w + x;
            const size_t len = sb_min_size(ops->out_w - x, span);
            copy_tile(s.panel + (j - j0), ldp, ops->c + to, ops->ldc, plan->m, len);
            if (!in_panel) finish_outputs(run, ops, ops->c + to, 0, to, plan->m, len);
        }
        j += span;
    }
}

/* A panel of plan->panel_strips strips of B and every row of packed A. For each
 * k-block the chunk packs its panel into scratch (a plain B row by row, a few
 * whole cache lines per row, which the prefetchers follow) or gathers it a
 * strip at a time straight into the first level (patches: short runs anyway,
 * used at once), then runs the kernel down every row for each strip; or it
 * reads each strip where it is, by offsets (SB_B_BY_OFFSETS). B is never
 * written whole to memory and read back. */
static void compute_panel(const sb_product_run *run, const sb_product_state *state, size_t chunk,
                          scratch_layout s)
{
    const sb_product_plan *plan = run->plan;
    const sb_operands *ops = &state->ops;
    const size_t nr = (size_t)plan->tile->nr;
    const size_t j0 = chunk * plan->panel_strips * nr;
    const size_t cols = sb_min_size(plan->n - j0, plan->panel_strips * nr);
    const int by_strip = plan->b_source == SB_B_PER_STRIP;
    if (plan->b_source == SB_B_BY_OFFSETS) {
        offsets_panel(run, state, s, j0, cols);
        return;
    }

    for (size_t kb = 0; kb < plan->k_blocks; ++kb) {
        const size_t kc = k_block_depth(plan->k, kb);
        const int accumulate = kb > 0, last = kb + 1 == plan->k_blocks;
        const a_strips a = a_block_for(run, state, s, 0, plan->m, kb, kc);
        if (!by_strip)
            fill_b(run, ops, 1, kb * SB_KC, kc, j0 / nr, j0 / nr + sb_ceil_div(cols, nr), s.panel);
        for (size_t jj = 0; jj < cols; jj += nr) {
            const float *strip = s.panel;
            if (by_strip)
                fill_b(run, ops, 0, kb * SB_KC, kc, (j0 + jj) / nr, (j0 + jj) / nr + 1, s.panel);
            else
                strip += (jj / nr) * kc * nr;
            run_strip(run, ops, s, kc, &a, strip, (ptrdiff_t)nr, 0, plan->m, j0 + jj,
                      sb_min_size(cols - jj, nr), accumulate, last);
        }
    }
    finish_outputs(run, ops, ops->c + j0, 0, j0, plan->m, cols);
}

/* The A row of a one-row product: plain, or packed (its values lie MR apart). */
static const float *row_a(const sb_product_plan *plan, const sb_product_state *state,
                          ptrdiff_t *step)
{
    const float *packed = packed_a_of(state);
    *step = packed ? (ptrdiff_t)plan->tile->mr : state->ops.a_col;
    return packed ? packed : state->ops.a;
}

/* One group of row_strips strips from packed B, or the ragged last group of
 * B read in place (packed here, a k-block at a time). */
static void compute_row_group(const sb_product_run *run, const sb_product_state *state,
                              size_t j0, scratch_layout s)
{
    const sb_product_plan *plan = run->plan;
    const sb_operands *ops = &state->ops;
    const size_t nr = (size_t)plan->tile->nr;
    const size_t live = sb_min_size(plan->n - j0, plan->row_cols);
    const float *packed_b = packed_b_of(state);
    float *out = live == plan->row_cols ? ops->c + j0 : s.edge_c;
    ptrdiff_t a_step;
    const float *a = row_a(plan, state, &a_step);

    for (size_t kb = 0; kb < plan->k_blocks; ++kb) {
        const size_t kc = k_block_depth(plan->k, kb);
        const float *bp;
        if (packed_b) {
            bp = packed_b + packed_block_offset(plan, kb) + (j0 / nr) * kc * nr;
        } else {
            fill_b(run, ops, 0, kb * SB_KC, kc, j0 / nr, j0 / nr + (size_t)plan->gemm->row_strips,
                   s.edge_b);
            bp = s.edge_b;
        }
        plan->row_kernel(nr, kc, a + (ptrdiff_t)(kb * SB_KC) * a_step, a_step, bp, (ptrdiff_t)nr,
                         (ptrdiff_t)(kc * nr), out, kb > 0);
    }
    if (out == s.edge_c) memcpy(ops->c + j0, s.edge_c, live * sizeof(float));
    finish_outputs(run, ops, ops->c + j0, 0, j0, 1, live);
}

/* B read in place, groups of whole width: walk down B in blocks of
 * ROW_P_BLOCK rows across the chunk's groups, so that B is read a few
 * contiguous rows at a time while the chunk's outputs stay in L1. */
#define ROW_P_BLOCK 16

/* Whole groups [j0, j_end) of B read in place into out (column j at
 * out + j - j0), ROW_P_BLOCK rows of B a pass across the groups. */
static void row_groups_in_place(const sb_product_plan *plan, const sb_product_state *state,
                                size_t j0, size_t j_end, float *out)
{
    const sb_operands *ops = &state->ops;
    ptrdiff_t a_step;
    const float *a = row_a(plan, state, &a_step);
    for (size_t p0 = 0; p0 < plan->k; p0 += ROW_P_BLOCK) {
        size_t pb = sb_min_size(plan->k - p0, ROW_P_BLOCK);
        for (size_t j = j0; j < j_end; j += plan->row_cols)
            plan->row_kernel((size_t)plan->tile->nr, pb, a + (ptrdiff_t)p0 * a_step, a_step,
                             ops->b + (ptrdiff_t)p0 * ops->b_row + (ptrdiff_t)j, ops->b_row,
                             (ptrdiff_t)plan->tile->nr, out + (j - j0), p0 > 0);
    }
}

static void compute_row_in_place(const sb_product_run *run, const sb_product_state *state,
                                 size_t j0, size_t j_end)
{
    const sb_operands *ops = &state->ops;
    row_groups_in_place(run->plan, state, j0, j_end, ops->c + j0);
    finish_outputs(run, ops, ops->c + j0, 0, j0, 1, j_end - j0);
}

/* The ragged last group of a B read in place, columns [j0, n), when B has
 * at least row_cols columns: the row kernel runs in place over B's last
 * row_cols columns, a window reaching back into columns another group
 * computes, into scratch, and only columns j0 on are kept. Every output is
 * the same operations whichever call computes it, so the bits are those of
 * packing the group (which cost 16% of a 1 x 1280 x 1000 product for its
 * last 104 columns). */
static void compute_row_window(const sb_product_run *run, const sb_product_state *state,
                               size_t j0, scratch_layout s)
{
    const sb_product_plan *plan = run->plan;
    const sb_operands *ops = &state->ops;
    const size_t w0 = plan->n - plan->row_cols;
    row_groups_in_place(plan, state, w0, plan->n, s.edge_c);
    memcpy(ops->c + j0, s.edge_c + (j0 - w0), (plan->n - j0) * sizeof(float));
    finish_outputs(run, ops, ops->c + j0, 0, j0, 1, plan->n - j0);
}

static void compute_row_chunk(const sb_product_run *run, const sb_product_state *state,
                              size_t chunk, scratch_layout s)
{
    const sb_product_plan *plan = run->plan;
    const size_t j0 = chunk * plan->row_chunk_cols;
    const size_t j_end = sb_min_size(plan->n, j0 + plan->row_chunk_cols);
    const int in_place = plan->b_source == SB_B_IN_PLACE;
    const size_t whole_end = !in_place ? j0 : j0 + (j_end - j0) / plan->row_cols * plan->row_cols;
    if (whole_end > j0) compute_row_in_place(run, state, j0, whole_end);
    if (whole_end < j_end && in_place && plan->n >= plan->row_cols)
        compute_row_window(run, state, whole_end, s);
    else
        for (size_t j = whole_end; j < j_end; j += plan->row_cols) compute_row_group(run, state, j, s);
}

/* Columns [j0, j0 + cols) of C for the transposed product (plan->swapped):
 * rows j0 .. of C^T = B^T A^T, the kernel reading B's columns in place as
 * the rows of its matrix and A's rows as its vectors, into y (C^T's column
 * i, which is C's row i, at y + i*cols); then C's rows and their epilogue. */
static void compute_swapped_column_chunk(const sb_product_run *run, const sb_operands *ops,
                                         size_t j0, size_t cols, float *y)
{
    const sb_product_plan *plan = run->plan;
    const size_t m = plan->n;   /* the call's rows */
    for (size_t kb = 0; kb < plan->k_blocks; ++kb) {
        const size_t kc = k_block_depth(plan->k, kb), p0 = kb * SB_KC;
        plan->column_direct(cols, kc, m, ops->b + (ptrdiff_t)j0 * ops->b_col + (ptrdiff_t)p0,
                            ops->b_col, ops->a + (ptrdiff_t)p0 * ops->a_col, ops->a_col,
                            ops->a_row, y, (ptrdiff_t)cols, kb > 0);
    }
    for (size_t i = 0; i < m; ++i)
        memcpy(ops->c + (ptrdiff_t)i * ops->ldc + (ptrdiff_t)j0, y + i * cols,
               cols * sizeof(float));
    finish_outputs(run, ops, ops->c + j0, 0, j0, m, cols);
}

/* Rows [i0, i0 + rows) of a matrix times n <= SB_COLUMNS_MAX columns: the
 * path's kernel over A's rows in place, or per k-block the chunk's rows of A
 * packed into MR-row strips (the first-level cache's) and the few-column
 * kernel down them; the sums column by column in scratch, then into C and
 * through the epilogue. */
static void compute_column_chunk(const sb_product_run *run, const sb_product_state *state,
                                 size_t chunk, scratch_layout s)
{
    const sb_product_plan *plan = run->plan;
    const sb_operands *ops = &state->ops;
    const sb_tile *tile = plan->tile;
    const size_t i0 = chunk * plan->column_rows, n = plan->n;
    const size_t rows = sb_min_size(plan->m - i0, plan->column_rows);
    const float *packed_b = packed_b_of(state);
    float *y = s.panel;   /* column j at y + j*rows */
    if (plan->swapped) {
        compute_swapped_column_chunk(run, ops, i0, rows, y);
        return;
    }
    for (size_t kb = 0; kb < plan->k_blocks; ++kb) {
        const size_t kc = k_block_depth(plan->k, kb), p0 = kb * SB_KC;
        /* row p of the k-block's B: in the plain matrix, or in the first
         * strip of the prepacked block (its columns adjacent) */
        const float *x = packed_b ? packed_b + packed_block_offset(plan, kb)
                                  : ops->b + (ptrdiff_t)p0 * ops->b_row;
        const ptrdiff_t x_step = packed_b ? (ptrdiff_t)tile->nr : ops->b_row;
        if (plan->column_direct) {
            plan->column_direct(rows, kc, n, ops->a + (ptrdiff_t)i0 * ops->a_row + (ptrdiff_t)p0,
                                ops->a_row, x, x_step, packed_b ? 1 : ops->b_col, y,
                                (ptrdiff_t)rows, kb > 0);
        } else {   /* (B's columns adjacent, or one column) */
            tile->pack_a(tile, ops->a, ops->a_row, ops->a_col, i0, rows, p0, kc, s.packed_a);
            plan->column_kernel((size_t)tile->mr, kc, rows, n, s.packed_a, x, x_step, y,
                                (ptrdiff_t)rows, kb > 0);
        }
    }
    float *c = ops->c + (ptrdiff_t)i0 * ops->ldc;
    /* C(i, j) = y[j*rows + i]; not sb_transpose_copy: C's row step may be
     * negative through the C API (sb_matmul_args.c_row) */
    for (size_t r = 0; r < rows; ++r)
        for (size_t j = 0; j < n; ++j) c[(ptrdiff_t)r * ops->ldc + (ptrdiff_t)j] = y[j * rows + r];
    finish_outputs(run, ops, c, i0, 0, rows, n);
}

static void compute_zero_k(const sb_product_run *run, const sb_operands *ops)
{
    for (size_t i = 0; i < run->plan->m; ++i)
        memset(ops->c + (ptrdiff_t)i * ops->ldc, 0, run->plan->n * sizeof(float));
    finish_outputs(run, ops, ops->c, 0, 0, run->plan->m, run->plan->n);
}

void sb_exec_compute(const sb_product_run *run, const sb_product_state *state, size_t chunk,
                     float *scratch)
{
    scratch_layout s = scratch_for(run->plan, scratch);
    switch (run->plan->route) {
    case SB_ROUTE_ZERO_K: compute_zero_k(run, &state->ops); break;
    case SB_ROUTE_ROW: compute_row_chunk(run, state, chunk, s); break;
    case SB_ROUTE_COLUMN: compute_column_chunk(run, state, chunk, s); break;
    case SB_ROUTE_TILES: compute_tile(run, state, chunk, s); break;
    case SB_ROUTE_PANELS: compute_panel(run, state, chunk, s); break;
    default: break;
    }
}
