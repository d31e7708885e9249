/* The planner (tiling.h): route, tile, chunks, workspace and work estimate of a
 * product, from its shape alone. Every choice here is about speed; none can
 * change a bit, since every route sums each output's k products in
 * increasing order with the same operations (docs/design.md). */
#include "framework/tiling.h"
#include "framework/step.h"
#include "framework/checked.h"
#include "framework/threads.h"
#include "isa/cpu_x86.h"

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
/* Panel mode: a chunk is a panel of SB_PANEL_STRIPS strips and every row of
 * A. Worth it while the call has enough panels to share among threads. */
#define MIN_PANEL_CHUNKS 8
/* The row route: a row of n outputs in about this many chunks (whole groups
 * of row_cols outputs, up to SB_ROW_GROUPS_PER_CHUNK), so that both cores
 * stream B: ResNet-50's 1 x 1000 x 2048 classifier was one chunk of 16
 * groups and ran at one thread's speed at 2. */
#define MIN_ROW_CHUNKS 8
/* B read by offsets: a panel's C (every row) in scratch, up to 256 KiB
 * (fewer strips per panel for more rows; one strip whatever it takes) */
#define OFFSETS_PANEL_FLOATS 65536
#define PANEL_MAX_TILE_ROWS 4        /* plain B through panel mode: up to 4 tile rows */
#define PANEL_MIN_B_FLOATS 65536.0   /* ... when B is over 256 KiB (smaller: in place) */
/* Tile width: narrowed when the call has few tile rows, so that it still has
 * about this many chunks to share out. */
#define MIN_TILE_CHUNKS 8
/* A is read in place by the tile kernels (no packing) when its rows or its
 * columns are contiguous and each tile uses its A block for at most this many
 * columns of B: below that, packing A costs a large share of the product.
 * Measured on avx512 (one thread, in place against packed, one process):
 * 64^3 1.16x, 128^3 1.15x, 256^3 1.21x, 128 x 768 x 768 1.09x and
 * 1500 x 64 x 1500 1.51x faster; but 1024^3 0.88x, 4096 x 768 x 768 0.93x and
 * 1500 x 1500 x 64 0.93x (wide tiles read each A strip many times, and rows
 * far apart share few L1 sets), so wider tiles keep packing. */
#define DIRECT_A_MAX_COLS 256

static size_t gcd_size(size_t a, size_t b)
{
    while (b) {
        size_t t = a % b;
        a = b, b = t;
    }
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

/* The tile's NC, narrowed when the call has fewer than MIN_TILE_CHUNKS tile
 * rows in all (in builds with threads), to no less than 4 strips, or 1 when
 * no tile packs A (A prepacked, or read where it is): then a narrower tile
 * costs nothing but its call, and a small map's 1x1 layer (48 x 169 x 256)
 * gets 6 chunks for the threads instead of 2. */
static size_t tile_width(const sb_tile *tile, size_t tile_rows, size_t n, int a_unpacked_per_tile)
{
    const size_t nr = (size_t)tile->nr;
    if (tile_rows == 0 || tile_rows >= MIN_TILE_CHUNKS || !sb_threading_available())
        return (size_t)tile->nc;
    size_t columns_wanted = sb_ceil_div(MIN_TILE_CHUNKS, tile_rows);
    size_t width = sb_ceil_div(sb_ceil_div(n, columns_wanted), nr) * nr;
    const size_t least = a_unpacked_per_tile ? nr : 4 * nr;
    if (width < least) width = least;
    return width < (size_t)tile->nc ? width : (size_t)tile->nc;
}

/* Per-thread scratch (see loops.c's scratch_layout): the A block of one
 * tile, a packed edge group of B, an edge tile of C, and a panel or strip of
 * B when the route gathers one. */
static size_t scratch_floats(const sb_gemm_config *gemm, const sb_tile *tile, size_t mc,
                             size_t panel_floats)
{
    size_t floats = mc * SB_KC + (size_t)SB_KC * gemm->row_strips * tile->nr +
                    (size_t)tile->mr * tile->nr + (size_t)gemm->row_strips * tile->nr +
                    panel_floats;
    return (floats + 15) & ~(size_t)15;   /* keep each thread's part 64-byte aligned */
}

size_t sb_packed_b_strips(const sb_gemm_config *gemm, const sb_tile *tile, size_t n)
{
    size_t group = (size_t)gemm->row_strips;
    return sb_ceil_div(sb_ceil_div(n, (size_t)tile->nr), group) * group;
}

int sb_packed_b_floats(const sb_gemm_config *gemm, const sb_tile *tile, size_t k, size_t n, size_t *floats)
{
    return sb_mul3_ok(sb_packed_b_strips(gemm, tile, n), (size_t)tile->nr, k, floats);
}

size_t sb_packed_a_floats(const sb_tile *tile, size_t m, size_t k)
{
    return sb_ceil_div(m, (size_t)tile->mr) * (size_t)tile->mr * k;
}

size_t sb_tile_computed_cols(const sb_tile *tile, size_t n)
{
    size_t nr = (size_t)tile->nr, last = n % nr;
    return n / nr * nr + (last == 0 ? 0 : last <= (size_t)tile->narrow_nr
                                              ? (size_t)tile->narrow_nr : nr);
}

/* The padded outputs a tile computes for m x n: whole MR-row strips by the
 * columns it computes. */
static double padded_area(const sb_tile *tile, size_t m, size_t n)
{
    size_t mr = (size_t)tile->mr;
    return (double)sb_ceil_div(m, mr) * (double)mr * (double)sb_tile_computed_cols(tile, n);
}

/* The ISA's tile for this mode, or another of its tiles that pads the
 * product at least MIN_TILE_GAIN less (every tile computes each output the
 * same way, so the choice is about speed alone). */
#define MIN_TILE_GAIN 0.02
static const sb_tile *product_tile(const sb_gemm_config *gemm, int mode, const sb_product_desc *desc)
{
    const sb_tile *best = sb_mode_product_tile(gemm, mode, sb_cpu_splits_512());
    /* the split CPU's exact tile runs 1.4x the others' speed: no other
     * tile's padding gain outweighs that */
    if (best != gemm->product_tile[mode == SB_MODE_EXACT]) return best;
    const sb_tile *few = gemm->few_rows_tile;
    if (few && desc->m <= (size_t)few->mr && few->mr < best->mr &&
        !(desc->b_form == SB_B_PACKED && few->nr != best->nr))
        return few;
    double best_area = padded_area(best, desc->m, desc->n);
    for (int i = 0; i < 4 && gemm->other_tiles[i]; ++i) {
        const sb_tile *t = gemm->other_tiles[i];
        if (desc->b_form == SB_B_PACKED && t->nr != best->nr) continue;
        double area = padded_area(t, desc->m, desc->n);
        if (area < best_area * (1.0 - MIN_TILE_GAIN)) best = t, best_area = area;
    }
    return best;
}

/* Whether the product is run transposed on the column route (below): a
 * plain A of at most SB_COLUMNS_MAX rows, a plain B of several columns
 * whose columns are contiguous and rows are not, and a path whose
 * few-column kernel reads its A in place (direct: that kernel, or null). */
static int swap_to_columns(sb_column_direct_fn direct, const sb_product_desc *desc)
{
    return direct && !desc->a_packed && desc->b_form == SB_B_MATRIX && desc->m <= SB_COLUMNS_MAX &&
           desc->n > 1 && desc->b_row == 1 && desc->b_col != 1;
}

int sb_plan_product(const sb_gemm_config *gemm, int mode, const sb_product_desc *desc,
                    sb_product_plan *plan)
{
    const size_t m = desc->m, n = desc->n, k = desc->k;
    const size_t count = desc->count ? desc->count : 1;
    const sb_tile *tile = desc->tile ? desc->tile : product_tile(gemm, mode, desc);
    *plan = (sb_product_plan){0};
    plan->gemm = gemm, plan->tile = tile;
    plan->exact = mode == SB_MODE_EXACT;
    plan->kernel = plan->exact ? tile->exact : tile->fast;
    plan->direct_kernel = plan->exact ? tile->direct_exact : tile->direct_fast;
    plan->strips_kernel = plan->exact ? tile->strips_exact : tile->strips_fast;
    plan->offsets_kernel = plan->exact ? tile->offsets_exact : tile->offsets_fast;
    if (tile->narrow_nr < tile->nr) {
        plan->narrow_offsets_kernel = plan->exact ? tile->narrow_offsets_exact
                                                  : tile->narrow_offsets_fast;
        plan->narrow_kernel = plan->exact ? tile->narrow_exact : tile->narrow_fast;
        plan->narrow_direct_kernel = plan->exact ? tile->narrow_direct_exact
                                                 : tile->narrow_direct_fast;
    }
    plan->row_kernel = plan->exact ? gemm->row_exact : gemm->row_fast;
    plan->m = m, plan->n = n, plan->k = k, plan->count = count;
    plan->row_cols = (size_t)gemm->row_strips * (size_t)tile->nr;
    plan->b_strips = sb_packed_b_strips(gemm, tile, n);
    plan->k_blocks = sb_ceil_div(k, SB_KC);
    plan->mc = (size_t)tile->mc;
    plan->tiles_m = sb_ceil_div(m, plan->mc);
    size_t all_tile_rows;
    if (!sb_mul_ok(plan->tiles_m, count, &all_tile_rows)) return SB_ERR_NO_MEMORY;
    /* A's rows or columns contiguous: the tiles may read it in place */
    const int a_contiguous = !desc->a_packed && (desc->a_col == 1 || desc->a_row == 1);
    /* no tile packs A: prepacked, or read in place whatever the tile width
     * (n within DIRECT_A_MAX_COLS) */
    const int a_unpacked = desc->a_packed || (a_contiguous && n <= DIRECT_A_MAX_COLS);
    plan->nc = tile_width(tile, all_tile_rows, n, a_unpacked);
    plan->tiles_n = sb_ceil_div(n, plan->nc);
    plan->scratch_floats = scratch_floats(gemm, tile, plan->mc, 0);

    if (m == 0 || n == 0) {
        plan->route = SB_ROUTE_EMPTY;
        return SB_OK;
    }
    if (k == 0) {
        plan->route = SB_ROUTE_ZERO_K;
        plan->compute_chunks = 1;
        plan->compute_ns = (double)m * (double)n * (double)count * SB_NS_PER_PACKED;
        return SB_OK;
    }
    size_t b_floats;   /* a whole packed B: its size must exist even where not used */
    if (!sb_packed_b_floats(gemm, tile, k, n, &b_floats)) return SB_ERR_NO_MEMORY;
    const double macs = (double)m * (double)n * (double)k * (double)count;
    const double b_elements = (double)n * (double)k * (double)count;
    const size_t b_groups = sb_ceil_div(plan->b_strips, SB_PACK_STRIPS);
    /* the path's few-column kernel over rows read in place (null: none), and
     * whether it can read A's (A's columns contiguous) */
    const sb_column_direct_fn direct_kernel = plan->exact ? gemm->column_direct_exact
                                                          : gemm->column_direct_fast;
    const sb_column_direct_fn column_direct = desc->a_col == 1 ? direct_kernel : NULL;

    if (desc->b_form == SB_B_OFFSETS) {
        /* B read in place by offsets: panels of strips, every row of packed
         * A down each strip; nothing packed, no panel in scratch. The caller
         * checked that the tile has offsets kernels and no strips kernel. */
        if (!plan->offsets_kernel || plan->strips_kernel || !desc->a_packed)
            return SB_ERR_ARGUMENT;
        plan->route = SB_ROUTE_PANELS;
        plan->b_source = SB_B_BY_OFFSETS;
        /* nothing is packed per panel: narrower panels where that gives
         * MIN_PANEL_CHUNKS chunks, for the threads (counted in the strips
         * of n itself: b_strips is padded to row groups, which could leave
         * a last panel with no column) */
        const size_t strips = sb_ceil_div(n, (size_t)tile->nr);
        const size_t rows = sb_ceil_div(m, (size_t)tile->mr) * (size_t)tile->mr;
        size_t panel_strips = sb_min_size(SB_PANEL_STRIPS, strips / MIN_PANEL_CHUNKS);
        /* the panel's C lives in scratch: at most OFFSETS_PANEL_FLOATS */
        panel_strips = sb_min_size(panel_strips, OFFSETS_PANEL_FLOATS / (rows * tile->nr));
        plan->panel_strips = panel_strips < 1 ? 1 : panel_strips;
        plan->compute_chunks = sb_ceil_div(strips, plan->panel_strips);
        size_t panel_floats;
        if (!sb_mul3_ok(rows, plan->panel_strips, (size_t)tile->nr, &panel_floats))
            return SB_ERR_NO_MEMORY;
        plan->scratch_floats = scratch_floats(gemm, tile, plan->mc, panel_floats);
        plan->compute_ns = macs / tile->muladds_per_ns;
    } else if (swap_to_columns(direct_kernel, desc)) {
        /* A few rows times a B whose columns are contiguous (torch's linear
         * weights, a transposed view): the row and tile routes would pack
         * all of B, a transpose through memory (nine tenths of a 1 x 2048
         * x 1000 linear layer). C^T = B^T A^T instead: B's columns are rows
         * the few-column kernel reads in place, A's rows its vectors, and
         * every output takes the same products in the same order, so the
         * same bits. */
        plan->route = SB_ROUTE_COLUMN;
        plan->b_source = SB_B_IN_PLACE;
        plan->swapped = 1;
        plan->m = n, plan->n = m;
        plan->column_direct = direct_kernel;   /* over B's columns: no packed kernel */
        plan->column_rows = SB_COLUMN_CHUNK_ROWS;
        plan->compute_chunks = sb_ceil_div(n, plan->column_rows);
        plan->scratch_floats =
            scratch_floats(gemm, tile, plan->mc, plan->column_rows * SB_COLUMNS_MAX);
        plan->compute_ns = (double)n * (double)k * (double)count * SB_NS_PER_PACKED +
                           macs / tile->muladds_per_ns;
    } else if (m == 1 && tile->nr % gemm->lanes == 0) {
        /* one row of A: the row kernel streams each strip of B once (it takes
         * whole vectors of its own width: not the split CPU's 8 x 24 tile) */
        plan->route = SB_ROUTE_ROW;
        const size_t groups = sb_ceil_div(n, plan->row_cols);
        plan->row_chunk_cols = sb_max_size(1, sb_min_size(SB_ROW_GROUPS_PER_CHUNK,
                                                          sb_ceil_div(groups, MIN_ROW_CHUNKS))) *
                               plan->row_cols;
        plan->compute_chunks = sb_ceil_div(n, plan->row_chunk_cols);
        plan->compute_ns = b_elements * SB_NS_PER_PACKED;
        if (desc->b_form == SB_B_PACKED) {
            plan->b_source = SB_B_PREPACKED;
        } else if (desc->b_form == SB_B_MATRIX && desc->b_col == 1) {
            /* whole groups read in place, a ragged last group packed per chunk */
            plan->b_source = SB_B_IN_PLACE;
        } else {   /* gathered, or columns apart: packed whole first */
            plan->b_source = SB_B_PACKED_WHOLE;
        }
    } else if (n <= SB_COLUMNS_MAX && !desc->a_packed &&
               (desc->b_form == SB_B_PACKED ||
                (desc->b_form == SB_B_MATRIX && (column_direct || n == 1 || desc->b_col == 1)))) {
        /* a matrix times a few vectors (B plain, or prepacked: its first
         * strip): the tile would compute NR columns to keep n. The
         * few-column kernel puts rows of C in its lanes and loads each
         * value of A once for the n columns. A chunk reads its
         * rows of A in place where the path has a kernel for that (rows
         * contiguous), else packs them a k-block at a time, into the cache
         * the kernel reads. */
        plan->route = SB_ROUTE_COLUMN;
        plan->b_source = desc->b_form == SB_B_PACKED ? SB_B_PREPACKED : SB_B_IN_PLACE;
        plan->column_kernel = plan->exact ? gemm->column_exact : gemm->column_fast;
        plan->column_direct = column_direct;
        const size_t mr = (size_t)tile->mr, whole_strips = SB_COLUMN_CHUNK_ROWS / mr * mr;
        plan->column_rows = column_direct ? SB_COLUMN_CHUNK_ROWS
                                          : sb_min_size(sb_max_size(whole_strips, mr), plan->mc);
        plan->compute_chunks = sb_ceil_div(m, plan->column_rows);
        plan->scratch_floats =
            scratch_floats(gemm, tile, plan->mc, plan->column_rows * SB_COLUMNS_MAX);
        plan->compute_ns = (double)m * (double)k * (double)count * SB_NS_PER_PACKED +
                           macs / tile->muladds_per_ns;
    } else {
        const int plain = desc->b_form == SB_B_MATRIX;
        int in_place = plain && desc->b_col == 1 &&
                       (plan->tiles_m == 1 ||
                        (plan->tiles_m <= IN_PLACE_MAX_TILE_ROWS && desc->b_row > 0 &&
                         desc->b_row <= IN_PLACE_MAX_ROW_FLOATS));
        size_t panels;
        if (!sb_mul_ok(sb_ceil_div(plan->b_strips, SB_PANEL_STRIPS), count, &panels))
            return SB_ERR_NO_MEMORY;
        const int shareable = plan->tiles_m == 1 || !sb_threading_available() ||
                              panels >= MIN_PANEL_CHUNKS;
        /* A gathered B is gathered panel by panel inside the chunks, unless
         * the call has too few panels to share and several tile rows: then
         * it is gathered whole once and the tiles share it. */
        int per_panel = desc->b_form == SB_B_GATHERED && shareable;
        /* A plain B with few rows of A: A packed once and B packed panel by
         * panel into the first-level cache, rather than B read in place with
         * its rows far apart or packed whole into memory and read back. */
        if (plain && shareable && plan->tiles_m <= PANEL_MAX_TILE_ROWS &&
            (double)k * (double)n > PANEL_MIN_B_FLOATS &&
            !(plan->tiles_m == 1 && n >= IN_PLACE_MIN_COLS_ONE_TILE &&
              streams_fit_l1(k, desc->b_row))) {
            per_panel = 1, in_place = 0;
        }
        if (per_panel) {
            plan->route = SB_ROUTE_PANELS;
            plan->b_source = plain ? SB_B_PER_PANEL : SB_B_PER_STRIP;
            plan->direct_a = a_contiguous && n <= DIRECT_A_MAX_COLS;
            plan->pack_a = !desc->a_packed && !plan->direct_a;
            /* one tile row and few panels in all (a small map's 1x1 layer:
             * 64 x 169 x 512 was one chunk): narrower panels, so that the
             * threads have chunks to share; every row of A runs down each
             * strip either way. Counted in the strips of n itself (b_strips
             * is padded to row groups). A shape's choice, never the
             * thread count's. */
            const size_t strips = sb_ceil_div(n, (size_t)tile->nr);
            size_t panel_strips = SB_PANEL_STRIPS;
            if (plan->tiles_m == 1 && panels < MIN_PANEL_CHUNKS) {
                const size_t wanted = sb_ceil_div(MIN_PANEL_CHUNKS, count);   /* per product */
                panel_strips = sb_max_size(1, sb_min_size(SB_PANEL_STRIPS, strips / wanted));
            }
            plan->panel_strips = panel_strips;
            plan->compute_chunks = sb_ceil_div(strips, panel_strips);
            size_t panel = (size_t)SB_KC * (plain ? SB_PANEL_STRIPS : 1) * (size_t)tile->nr;
            plan->scratch_floats = scratch_floats(gemm, tile, plan->mc, panel);
            plan->compute_ns = macs / tile->muladds_per_ns + b_elements * SB_NS_PER_PACKED;
        } else {
            plan->route = SB_ROUTE_TILES;
            plan->b_source = desc->b_form == SB_B_PACKED ? SB_B_PREPACKED
                             : in_place                  ? SB_B_IN_PLACE
                                                         : SB_B_PACKED_WHOLE;
            plan->direct_a = a_contiguous && sb_min_size(n, plan->nc) <= DIRECT_A_MAX_COLS;
            if (!sb_mul_ok(plan->tiles_m, plan->tiles_n, &plan->compute_chunks))
                return SB_ERR_NO_MEMORY;
            plan->compute_ns = macs / tile->muladds_per_ns +
                               (desc->a_packed || plan->direct_a
                                    ? 0.0
                                    : (double)m * (double)k * (double)plan->tiles_n *
                                          (double)count * SB_NS_PER_PACKED);
        }
    }
    if (plan->b_source == SB_B_PACKED_WHOLE) {
        plan->packed_b_floats = b_floats;
        plan->prepare_chunks = plan->k_blocks * b_groups;
        plan->prepare_ns = b_elements * SB_NS_PER_PACKED;
    }
    if (plan->pack_a) {
        plan->packed_a_floats = sb_packed_a_floats(tile, m, k);
        plan->prepare_chunks += plan->k_blocks;
        plan->prepare_ns += (double)m * (double)k * (double)count * SB_NS_PER_PACKED;
    }
    return SB_OK;
}

/* The framework's assumptions about a tile of an ISA. */
static int tile_violations(const sb_gemm_config *gemm, const sb_tile *tile, int lanes)
{
    int bad = 0;
    bad += tile->mr < 1 || tile->nr < 1 || tile->mr > gemm->max_mr || tile->nr > gemm->max_nr;
    bad += tile->nr > SB_MAX_TILE_NR;
    bad += tile->mr % 2 != 0;   /* the few-column kernel: 4-lane slivers end in 4 or 2 rows */
    bad += tile->nr % lanes != 0;
    bad += tile->mc < tile->mr || tile->mc % tile->mr != 0;   /* tiles start on whole strips */
    bad += tile->nc < tile->nr || tile->nc % tile->nr != 0;
    bad += tile->narrow_nr < 1 || tile->narrow_nr > tile->nr || tile->narrow_nr % lanes;
    bad += !tile->exact || !tile->fast || !tile->narrow_exact || !tile->narrow_fast;
    bad += !tile->direct_exact || !tile->direct_fast || !tile->narrow_direct_exact ||
           !tile->narrow_direct_fast;
    bad += !tile->pack_a || !tile->pack_b || !tile->pack_b_rows || tile->muladds_per_ns < 1;
    bad += !tile->strips_exact != !tile->strips_fast;   /* both or neither */
    bad += !tile->offsets_exact != !tile->offsets_fast;
    bad += tile->offsets_exact && tile->narrow_nr < tile->nr &&
           (!tile->narrow_offsets_exact || !tile->narrow_offsets_fast);
    return bad;
}

int sb_plan_selfcheck(void)
{
    int bad = 0;
    for (int path = 0; path < sb_path_count(); ++path) {
        if (!sb_path_built(path)) continue;
        const sb_isa *isa = sb_isa_get(path);
        bad += !isa->gemm || !isa->dwconv || !isa->unary;
        if (!isa->gemm || !isa->dwconv || !isa->unary) continue;
        bad += !isa->dwconv->exact || !isa->dwconv->fast || !isa->unary->exact || !isa->unary->fast;
        const sb_gemm_config *gemm = isa->gemm;
        bad += gemm->row_strips < 1 || gemm->lanes < 1;
        bad += !gemm->row_exact || !gemm->row_fast || !gemm->column_exact || !gemm->column_fast;
        bad += !gemm->column_direct_exact != !gemm->column_direct_fast;   /* both or neither */
        /* the 512-bit lanes kernels: both or neither, and only beside the
         * 256-bit ones (conv_lanes.c plans with those first) */
        bad += !gemm->lanes_wide_exact != !gemm->lanes_wide_fast;
        bad += gemm->lanes_wide_exact && (!gemm->lanes_exact || !gemm->lanes_fast);
        /* the depthwise lanes route: all four kernels or none */
        const sb_dwconv_config *dw = isa->dwconv;
        const int dw_lanes = !!dw->lanes_exact + !!dw->lanes_fast + !!dw->lanes_gather +
                             !!dw->lanes_scatter;
        bad += dw_lanes != 0 && dw_lanes != 4;
        bad += !dw->stride2_exact != !dw->stride2_fast;   /* both or neither */
        for (int mode = 0; mode < 2; ++mode)
            bad += tile_violations(gemm, gemm->product_tile[mode], gemm->lanes);
        for (int i = 0; i < 4 && gemm->other_tiles[i]; ++i)
            bad += tile_violations(gemm, gemm->other_tiles[i], gemm->lanes);
        if (gemm->few_rows_tile) bad += tile_violations(gemm, gemm->few_rows_tile, gemm->lanes);
        /* B is packed before the mode is known: both modes read one layout. */
        bad += gemm->product_tile[0]->nr != gemm->product_tile[1]->nr;
        if (gemm->split_exact_tile)
            bad += tile_violations(gemm, gemm->split_exact_tile, gemm->split_lanes) +
                   (gemm->split_exact_tile->nr != gemm->product_tile[1]->nr);
        /* (the split exact convolution tile runs only where its MR is the
         * packing's: sb_conv_product_tile) */
        for (size_t cout_g = 1; cout_g <= 256; ++cout_g)
            bad += tile_violations(gemm, sb_conv_tile(gemm, cout_g), gemm->lanes);
        if (gemm->split_exact_conv_tile)
            bad += tile_violations(gemm, gemm->split_exact_conv_tile, gemm->split_lanes);
    }
    return bad + sb_step_selfcheck();
}
