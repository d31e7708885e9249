/* 2-D convolution (NCHW): one matrix product per image and group, all of
 * them planned once and run by the driver in one parallel run.
 *
 * A is the group's weights, Cout/G rows by K = C/G*KH*KW columns, the taps
 * ordered (c, ky, kx), packed once for the call (or by sb_conv2d_pack); B is
 * the patch matrix, K rows by OH*OW columns; C is the group's output planes.
 * The product sums each output's K taps in increasing order from +0, which is
 * the convolution's definition, so every route below gives the definition's
 * bits:
 *
 * - pointwise (1x1 kernel, unit strides, no padding): B is the input itself,
 *   row p being input plane p; a 1x1 kernel with strides and no padding is
 *   pointwise over the input's taps gathered into compact planes first;
 * - an output map of at most SB_FEW_COLUMNS_MAP positions (any kernel): the
 *   weights times a few columns, output channels in the vector lanes
 *   (few_columns.c);
 * - a map on which the tiles below would compute many positions only to
 *   throw them away (7x7: 64 for 49), on a path with the kernels: output
 *   channels in the vector lanes, B read from the same planes
 *   (conv_lanes.c);
 * - other shapes: the patch matrix is never built; the input is stored once
 *   as padded rows split by column phase (padded_rows.c), or read in place,
 *   and the patches are gathered from it into packed strips
 *   (gather_patch_strips), strip by strip inside each panel, or whole before
 *   the tiles when the call has few panels (the planner's choice).
 *
 * Bias and activation are the framework's per-tile epilogue. A depthwise
 * layer (one input channel per group) runs the direct kernel of depthwise.c. */
#include <string.h>
#include "kernels/conv_internal.h"
#include "kernels/prepared.h"
#include "framework/checked.h"
#include "framework/driver.h"
#include "framework/memory.h"
#include "framework/threads.h"
#include "isa/cpu_x86.h"

/* Floats after the stored planes: a whole-strip copy reads up to NR - 1 past
 * the last input float a run needs. */
#define PLANES_SLACK SB_MAX_TILE_NR
/* Strips of more runs than this copy each run's own length: whole-strip
 * copies of many short runs would write NR floats for each. */
#define WHOLE_COPY_MAX_RUNS 4
/* Stored planes are built while at most 4 times the input plane plus this:
 * only a huge padding or dilation (2^40 columns of zeros) makes them larger,
 * and such a call reads its taps one by one instead. */
#define STORED_PLANE_EXTRA ((size_t)1 << 16)
/* Unit strides read the stored planes by offsets when at most one output
 * column in WIDE_WASTE is computed past a row's end and thrown away. */
#define WIDE_WASTE 10
/* Input planes stored per chunk of the parallel build: a few, so that a
 * layer of 64 channels still splits over the threads. A plane of more than
 * BAND_FLOATS stored floats is built in bands of rows of about that many
 * instead, so that a stem's three large planes split over the threads too. */
#define PLANES_PER_CHUNK 8
#define BAND_FLOATS ((size_t)1 << 14)

typedef struct {
    const sb_conv_desc *d;
    size_t cin_g, cout_g, k, cols;   /* channels per group, K, OH*OW */
    size_t group_floats;             /* packed weights of one group */
    const float *packed;             /* every group's packed weights */
    /* What B is read from: every (image, channel) input plane, plane i at
     * planes + i * plane_floats, as the input itself (pointwise, or no
     * padding and unit column steps) or as stored rows (padded_rows.c). */
    sb_padded_rows rows;
    size_t stored_rows;              /* of each plane; 0: read the input element by element */
    const float *planes;
    size_t plane_floats;
    const float *planes_end;         /* whole-strip copies read below this */
    size_t plane_count;              /* stored planes (images x channels) */
    size_t band_rows, bands;         /* the build's bands of a plane (bands == 1: whole planes) */
    /* The kernels read the stored planes by offsets, tap p's row at
     * b_off[p], and the columns are wide (rows of wide_w floats;
     * reads_by_offsets); 0 when the patches are gathered. */
    size_t wide_w;
    const ptrdiff_t *b_off;
    /* Strided: each plane stored as phase planes of rows_ph rows
     * (reads_by_phases); 0: as padded rows. */
    size_t rows_ph;
    size_t planes_per_chunk;         /* of the parallel build, whole planes */
    int lanes;                       /* the channels-in-lanes route (conv_lanes.c) */
    const sb_tile *tile;             /* the weights' packing */
} conv_call;

/* The gatherer reads the input in place when it needs no padding and no
 * phase split: its rows are then the stored rows. Not when the output rows
 * are shorter than IN_PLACE_MIN_ROW: a 1-D convolution laid out as
 * N x C x L x 1 (magika's 5x1 layer, 75% of that model) made the gatherer
 * copy one float a run, a fifth of the layer; its rows are stored instead
 * (a copy, no padding), and the unit-stride offsets route reads them as one
 * long run (1.1-1.2x on that layer). */
#define IN_PLACE_MIN_ROW 8
static int reads_input_in_place(const sb_conv_desc *d)
{
    return d->stride_w == 1 && d->pad_top == 0 && d->pad_bottom == 0 && d->pad_left == 0 &&
           d->pad_right == 0 && d->out_w >= IN_PLACE_MIN_ROW;
}

/* Whole-strip copies of a compile-time size become a few vector moves. */
static inline void copy_floats(float *dst, const float *src, size_t count)
{
    switch (count) {
    /* __builtin_memcpy: inlined also in the freestanding WebAssembly build */
    case 8: __builtin_memcpy(dst, src, 8 * sizeof(float)); return;
    case 12: __builtin_memcpy(dst, src, 12 * sizeof(float)); return;
    case 16: __builtin_memcpy(dst, src, 16 * sizeof(float)); return;
    case 32: __builtin_memcpy(dst, src, 32 * sizeof(float)); return;
    default: memcpy(dst, src, count * sizeof(float)); return;
    }
}

/* A run: columns of a strip that lie in one output row. col is its first
 * column in the strip, src the stored-row offset of its first output's tap
 * (0, 0) in the plane; its outputs read consecutive floats for every tap. */
typedef struct { size_t col, src, len; } patch_run;

/* sb_gather_fn: the patch matrix's strips, ops->b being the group's first
 * stored plane of the image. Tap (c, ky, kx) of output (oy, ox) is the float
 *   c*plane_floats + (oy*sh + ky*dh)*rs + phase(kx*dw)*pws + ox + pos(kx*dw)
 * (padded_rows.c), so each run of a tap row is one contiguous copy. Rows are
 * written in increasing order, so a run may be copied as a whole NR floats:
 * what it writes past its end belongs to the next run or the next row, which
 * is written after it; the strip's last row copies exact lengths, so that no
 * copy leaves the strip. */
static void gather_patch_strips(const void *ctx, const sb_operands *ops, const sb_tile *tile,
                                size_t p0, size_t kc, size_t strip0, size_t strip_end,
                                float *dst)
{
    const conv_call *call = ctx;
    const sb_conv_desc *d = call->d;
    const size_t nr = (size_t)tile->nr, taps = d->kh * d->kw;
    const size_t rs = call->rows.rs, pws = call->rows.pws, sw = d->stride_w;
    const size_t row_step = d->dil_h * rs, src_row = d->stride_h * rs;
    const size_t dil_phase = d->dil_w % sw, dil_pos = d->dil_w / sw;   /* one kx step */
    patch_run runs[SB_MAX_TILE_NR];
    for (size_t strip = strip0; strip < strip_end; ++strip, dst += kc * nr) {
        const size_t j0 = strip * nr;
        const size_t live = j0 < call->cols ? sb_min_size(call->cols - j0, nr) : 0;
        size_t count = 0;
        for (size_t j = j0; j < j0 + live; ++count) {
            const size_t oy = j / d->out_w, ox = j % d->out_w;
            runs[count].col = j - j0;
            runs[count].src = oy * src_row + ox;
            runs[count].len = sb_min_size(d->out_w - ox, j0 + live - j);
            j += runs[count].len;
        }
        /* The last run reads furthest. */
        const size_t reach = count ? runs[count - 1].src + nr : 0;
        const int whole = count <= WHOLE_COPY_MAX_RUNS;
        size_t c = p0 / taps, ky = p0 % taps / d->kw, kx = p0 % d->kw;
        size_t phase = kx * d->dil_w % sw, pos = kx * d->dil_w / sw;
        const float *tap_row = ops->b + c * call->plane_floats + ky * row_step;
        for (size_t p = 0; p < kc; ++p) {
            const float *tap = tap_row + phase * pws + pos;
            float *out = dst + p * nr;
            if (whole && p + 1 < kc && (size_t)(call->planes_end - tap) >= reach) {
                __builtin_prefetch(tap + reach + nr);
                for (size_t r = 0; r < count; ++r)
                    copy_floats(out + runs[r].col, tap + runs[r].src, nr);
            } else {
                for (size_t r = 0; r < count; ++r)
                    memcpy(out + runs[r].col, tap + runs[r].src, runs[r].len * sizeof(float));
            }
            if (++kx < d->kw) {
                phase += dil_phase, pos += dil_pos;
                if (phase >= sw) phase -= sw, ++pos;
            } else {
                kx = 0, phase = 0, pos = 0;
                if (++ky < d->kh) {
                    tap_row += row_step;
                } else {
                    ky = 0, ++c;
                    tap_row = ops->b + c * call->plane_floats;
                }
            }
        }
        if (live < nr)
            for (size_t p = 0; p < kc; ++p)
                memset(dst + p * nr + live, 0, (nr - live) * sizeof(float));
    }
}

/* sb_gather_fn for the calls whose stored planes would be huge: every tap of
 * every output from the input, +0 where it falls in the padding. */
static void gather_patch_elements(const void *ctx, const sb_operands *ops, const sb_tile *tile,
                                  size_t p0, size_t kc, size_t strip0, size_t strip_end,
                                  float *dst)
{
    const conv_call *call = ctx;
    const sb_conv_desc *d = call->d;
    const size_t nr = (size_t)tile->nr, taps = d->kh * d->kw;
    for (size_t strip = strip0; strip < strip_end; ++strip, dst += kc * nr) {
        for (size_t p = 0; p < kc; ++p) {
            const size_t c = (p0 + p) / taps, ky = (p0 + p) % taps / d->kw, kx = (p0 + p) % d->kw;
            for (size_t t = 0; t < nr; ++t) {
                const size_t j = strip * nr + t;
                float v = 0.0f;
                if (j < call->cols) {
                    /* padded coordinates; every product is below the padded
                     * extent, which sb_conv_parse bounds */
                    const size_t py = j / d->out_w * d->stride_h + ky * d->dil_h;
                    const size_t px = j % d->out_w * d->stride_w + kx * d->dil_w;
                    if (py >= d->pad_top && py - d->pad_top < d->h && px >= d->pad_left &&
                        px - d->pad_left < d->w)
                        v = ops->b[(c * d->h + py - d->pad_top) * d->w + px - d->pad_left];
                }
                dst[p * nr + t] = v;
            }
        }
    }
}

/* Product i is image i / G, group i % G. */
static void conv_operands(const void *ctx, size_t i, sb_operands *ops)
{
    const conv_call *call = ctx;
    const sb_conv_desc *d = call->d;
    const size_t n = i / d->groups, g = i % d->groups;
    memset(ops, 0, sizeof *ops);
    ops->packed_a = call->packed ? call->packed + g * call->group_floats : NULL;
    ops->b = call->planes ? call->planes + (n * d->c + g * call->cin_g) * call->plane_floats
                          : NULL;
    ops->b_row = (ptrdiff_t)(d->h * d->w), ops->b_col = 1;   /* pointwise: the planes */
    ops->c = d->y + (n * d->cout + g * call->cout_g) * call->cols;
    ops->ldc = (ptrdiff_t)call->cols;
    ops->row_bias = d->bias ? d->bias + g * call->cout_g : NULL;
    ops->row_affine = d->affine ? d->affine + 4 * g * call->cout_g : NULL;
    ops->residual = d->residual ? d->residual + (ops->c - d->y) : NULL;
    if (call->wide_w) ops->b_off = call->b_off, ops->wide_w = call->wide_w, ops->out_w = d->out_w;
}

static size_t packed_group_floats(const sb_tile *tile, size_t cout_g, size_t k)
{
    return sb_packed_a_floats(tile, cout_g, k);
}

/* How many padded rows of each input plane the call reads, with rows->pw,
 * pws and rs filled; 0 when the stored planes would be too large (or a size
 * overflows). */
static size_t stored_rows(const sb_conv_desc *d, sb_padded_rows *rows)
{
    size_t count, reach_h, floats, bound;
    if (!sb_padded_rows_size(d, rows) || !sb_mul_ok(d->out_h - 1, d->stride_h, &count) ||
        !sb_mul_ok(d->kh - 1, d->dil_h, &reach_h) || !sb_add_ok(count, reach_h, &count) ||
        !sb_add_ok(count, 1, &count) || !sb_mul_ok(count, rows->rs, &floats) ||
        !sb_mul3_ok(4, d->h, d->w, &bound) || !sb_add_ok(bound, STORED_PLANE_EXTRA, &bound) ||
        floats > bound)
        return 0;
    return count;
}

/* Both offsets routes: the tile has the offsets kernels (sme's strips
 * kernel gathers instead), and wide rows of row_w columns throw away at
 * most one column in WIDE_WASTE. */
static int wide_rows_pay(const sb_tile *tile, size_t row_w, size_t out_w)
{
    return tile->offsets_exact && tile->offsets_fast && !tile->strips_exact && row_w >= out_w &&
           (row_w - out_w) * WIDE_WASTE <= row_w;
}

/* Unit strides over stored padded rows (rows of rs floats): output (oy, ox)
 * reads tap (c, ky, kx) at c*plane_floats + (oy + ky*dh)*rs + ox + kx*dw,
 * so in "wide" columns j = oy*rs + ox consecutive columns read consecutive
 * floats for every tap, across row ends too. The kernels then read B where
 * it is, row p at its tap's offset, with no patch matrix; the rs - out_w
 * columns past each row's end read the next row's padding and are never
 * stored. The product's sums are the same, so are the bits. */
static int reads_by_offsets(const sb_conv_desc *d, const conv_call *call, const sb_tile *tile)
{
    return d->stride_h == 1 && d->stride_w == 1 && !sb_conv_is_pointwise(d) &&
           !reads_input_in_place(d) && call->stored_rows > 0 &&
           wide_rows_pay(tile, call->rows.rs, d->out_w);
}

/* Strides over stored phase planes (padded_rows.c: row phase ry, column
 * phase rx, rows_ph rows pws floats apart): output (oy, ox) reads tap
 * (c, ky, kx), y = ky*dh and x = kx*dw, at
 *   c*plane_floats + ((y%sh*sw + x%sw)*rows_ph + y/sh + oy)*pws + x/sw + ox,
 * so in wide columns j = oy*pws + ox consecutive columns read consecutive
 * floats for every tap, as unit strides do over padded rows: the kernels
 * read B in place by offsets, and the pws - out_w columns past each row's
 * end are thrown away. A stride-2 stem's patch gather was a third of the
 * layer. The same sums, so the same bits. */
static int reads_by_phases(const sb_conv_desc *d, const conv_call *call, const sb_tile *tile)
{
    return (d->stride_h > 1 || d->stride_w > 1) && !sb_conv_is_pointwise(d) &&
           call->stored_rows > 0 && call->rows.pws > d->out_w &&
           wide_rows_pay(tile, call->rows.pws, d->out_w);
}

/* The call's shape-dependent part and its product plan (no pointer is read:
 * the call is prepared once and run many times). */
static int plan_call(const sb_conv_desc *d, conv_call *call, sb_product_plan *plan, const sb_tile *tile)
{
    memset(call, 0, sizeof *call);
    call->d = d;
    call->tile = tile;
    call->cin_g = d->c / d->groups, call->cout_g = d->cout / d->groups;
    call->k = call->cin_g * d->kh * d->kw;
    call->cols = d->out_h * d->out_w;
    call->group_floats = packed_group_floats(tile, call->cout_g, call->k);
    const int pointwise = sb_conv_is_pointwise(d);
    if (reads_input_in_place(d)) {
        call->rows.d = d, call->rows.pw = call->rows.pws = call->rows.rs = d->w;
        call->stored_rows = d->h;
    } else {
        call->stored_rows = stored_rows(d, &call->rows);
    }
    call->wide_w = reads_by_offsets(d, call, tile) ? call->rows.rs : 0;
    if (reads_by_phases(d, call, tile)) {
        call->rows_ph = sb_ceil_div(call->stored_rows, d->stride_h);
        call->wide_w = call->rows.pws;
    }
    sb_product_desc desc = {0};
    desc.m = call->cout_g, desc.k = call->k;
    /* wide: the last row's columns past its end are not computed (no
     * overflow: below the stored plane, whose size was checked) */
    desc.n = call->wide_w ? (d->out_h - 1) * call->wide_w + d->out_w : call->cols;
    desc.b_row = (ptrdiff_t)(d->h * d->w), desc.b_col = 1;
    desc.b_form = pointwise ? SB_B_MATRIX : call->wide_w ? SB_B_OFFSETS : SB_B_GATHERED;
    desc.a_packed = 1;
    desc.count = d->n * d->groups;
    /* the exact tile of a CPU that splits 512-bit operations reads the same
     * packed weights (its MR is the packing's); the tile never changes a bit */
    const int splits_512 = sb_cpu_splits_512();
    desc.tile = sb_conv_product_tile(d->isa->gemm, tile, d->mode, splits_512);
    const int gathers = desc.b_form == SB_B_GATHERED;
    if (call->stored_rows > 0 && sb_conv_lanes_applies(d, desc.tile, desc.n, gathers, splits_512)) {
        /* no product plan: conv_lanes.c plans its own, over padded rows */
        call->lanes = 1, call->wide_w = 0, call->rows_ph = 0;
        memset(plan, 0, sizeof *plan);
        return SB_OK;
    }
    return sb_plan_product(d->isa->gemm, d->mode, &desc, plan);
}

/* The products' run over a planned call. */
static void bind_run(const sb_conv_desc *d, const conv_call *call, const sb_product_plan *plan,
                     sb_product_run *run)
{
    memset(run, 0, sizeof *run);
    run->plan = plan;
    run->activation = d->activation;
    run->max_threads = d->max_threads;
    if (!sb_conv_is_pointwise(d) && !call->wide_w) {
        run->gather = call->stored_rows ? gather_patch_strips : gather_patch_elements;
        run->gather_ctx = call;
    }
    run->operands = conv_operands;
    run->operands_ctx = call;
}

/* sb_chunk_fn: stored planes [chunk * PLANES_PER_CHUNK, ...), or band
 * chunk % bands of plane chunk / bands (a chunk's rows are the same
 * whatever the thread count). */
static void build_planes_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const conv_call *call = ctx;
    float *stored = (float *)call->planes;   /* the workspace store_planes owns */
    if (call->bands > 1) {
        const size_t i = chunk / call->bands, r0 = chunk % call->bands * call->band_rows;
        const size_t rows = sb_min_size(call->band_rows, call->stored_rows - r0);
        const int last = i + 1 == call->plane_count && r0 + rows == call->stored_rows;
        sb_padded_build_rows(&call->rows, stored + i * call->plane_floats + r0 * call->rows.rs, i,
                             r0, rows, last ? PLANES_SLACK : 0);
        return;
    }
    const size_t per = call->planes_per_chunk;
    const size_t end = sb_min_size(call->plane_count, (chunk + 1) * per);
    for (size_t i = chunk * per; i < end; ++i) {
        const size_t slack = i + 1 == call->plane_count ? PLANES_SLACK : 0;
        if (call->rows_ph)
            sb_padded_build_phase_planes(&call->rows, stored + i * call->plane_floats, i, 0,
                                         call->stored_rows, call->rows_ph, slack);
        else
            sb_padded_build_rows(&call->rows, stored + i * call->plane_floats, i, 0,
                                 call->stored_rows, slack);
    }
}

/* Where B is read from (conv_call.planes): the input itself, or every plane
 * of it stored as padded rows in workspace (*own, for the caller to release),
 * with the phase bounds in front. */
static int store_planes(const sb_conv_desc *d, conv_call *call, void **own)
{
    *own = NULL;
    /* B read as the input's own planes: pointwise, in place, or element by element */
    if (sb_conv_is_pointwise(d) || reads_input_in_place(d) || !call->stored_rows) {
        call->planes = d->x;
        call->plane_floats = d->h * d->w;
        call->planes_end = d->x ? d->x + d->n * d->c * d->h * d->w : NULL;
        return SB_OK;
    }
    const size_t sw = d->stride_w;
    size_t planes, floats, bounds_bytes, offsets_bytes = 0, bytes;
    /* phase planes: sh x sw of rows_ph rows of pws floats (<= rs per
     * stored row, sw * pws being rs) */
    const int ok = call->rows_ph
        ? sb_mul3_ok(d->stride_h * call->rows_ph, d->stride_w, call->rows.pws, &call->plane_floats)
        : sb_mul_ok(call->stored_rows, call->rows.rs, &call->plane_floats);
    if (!ok ||
        !sb_mul_ok(d->n, d->c, &planes) || !sb_mul_ok(planes, call->plane_floats, &floats) ||
        !sb_add_ok(floats, PLANES_SLACK, &floats) ||
        !sb_mul_ok(2 * sizeof(size_t), sw, &bounds_bytes) ||
        !sb_add_ok(bounds_bytes, 63, &bounds_bytes) ||
        (call->wide_w && (!sb_mul_ok(call->k, sizeof(ptrdiff_t), &offsets_bytes) ||
                          !sb_add_ok(offsets_bytes, 63, &offsets_bytes))) ||
        !sb_mul_ok(floats, sizeof(float), &bytes) ||
        !sb_add_ok(bytes, bounds_bytes & ~(size_t)63, &bytes) ||
        !sb_add_ok(bytes, offsets_bytes & ~(size_t)63, &bytes))
        return SB_ERR_NO_MEMORY;
    bounds_bytes &= ~(size_t)63;   /* the planes start on a cache line */
    offsets_bytes &= ~(size_t)63;
    unsigned char *workspace = sb_workspace_get(bytes);
    if (!workspace) return SB_ERR_NO_MEMORY;
    size_t *lo = (size_t *)(void *)workspace;
    float *stored = (float *)(void *)(workspace + bounds_bytes + offsets_bytes);
    if (call->wide_w) {   /* tap p = (c, ky, kx)'s row in the group's stored planes */
        ptrdiff_t *b_off = (ptrdiff_t *)(void *)(workspace + bounds_bytes);
        if (call->rows_ph)
            sb_phase_tap_offsets(&call->rows, call->cin_g, call->plane_floats, call->rows_ph,
                                 b_off);
        else
            sb_padded_tap_offsets(&call->rows, call->cin_g, call->plane_floats, b_off);
        call->b_off = b_off;
    }
    sb_padded_phase_bounds(&call->rows, lo, lo + sw);
    call->rows.lo = lo, call->rows.hi = lo + sw;
    call->planes = stored;
    call->planes_end = stored + floats;
    call->plane_count = planes;
    call->band_rows = sb_max_size(1, BAND_FLOATS / call->rows.rs);
    call->bands = sb_ceil_div(call->stored_rows, call->band_rows);
    call->planes_per_chunk = PLANES_PER_CHUNK;
    if (call->rows_ph) {   /* phase planes are built whole: a large one a chunk */
        call->band_rows = call->stored_rows, call->bands = 1;
        if (call->plane_floats > BAND_FLOATS) call->planes_per_chunk = 1;
    }
    size_t chunks;
    if (call->bands > 1) {
        if (!sb_mul_ok(planes, call->bands, &chunks)) return SB_ERR_NO_MEMORY;
    } else {
        chunks = sb_ceil_div(planes, call->planes_per_chunk);
    }
    sb_parallel_run(sb_threads_for_run(sb_thread_cap(d->max_threads),
                                        (double)floats * SB_NS_PER_PACKED, chunks),
                    chunks, build_planes_chunk, call);
    *own = workspace;
    return SB_OK;
}

/* Weights packed for the tile: the prepacked ones, or packed now into
 * *own (for the caller to release). */
static int packed_weights(const sb_conv_desc *d, const sb_tile *tile, const float **packed, float **own)
{
    const size_t cout_g = d->cout / d->groups, k = d->c / d->groups * d->kh * d->kw;
    *own = NULL;
    *packed = d->packed;
    if (d->packed || k == 0) return SB_OK;
    size_t bytes;   /* every route reads the weights packed: pack them once */
    if (!sb_mul3_ok(d->groups, packed_group_floats(tile, cout_g, k), sizeof(float), &bytes))
        return SB_ERR_NO_MEMORY;
    if (!(*own = sb_workspace_get(bytes))) return SB_ERR_NO_MEMORY;
    for (size_t g = 0; g < d->groups; ++g)
        sb_pack_a_whole(tile, cout_g, k, d->weights + g * cout_g * k, (ptrdiff_t)k, 1,
                        *own + g * packed_group_floats(tile, cout_g, k));
    *packed = *own;
    return SB_OK;
}

/* A 1x1 kernel with strides and no padding reads one input float in
 * stride_h x stride_w: gathered into compact planes of the output's map, they
 * make it a pointwise layer (the same taps, c in increasing order, so the
 * same sums and bits), which reads its planes in place as the product's B
 * instead of storing every input row split by column phase to read a
 * quarter of it (ResNet's downsampling layers). */
static int subsamples(const sb_conv_desc *d)
{
    return d->kh == 1 && d->kw == 1 && (d->stride_h > 1 || d->stride_w > 1) && d->pad_top == 0 &&
           d->pad_bottom == 0 && d->pad_left == 0 && d->pad_right == 0;
}

/* d as the pointwise layer over the compact planes (x set by the caller). */
static sb_conv_desc pointwise_of(const sb_conv_desc *d)
{
    sb_conv_desc p = *d;
    p.h = d->out_h, p.w = d->out_w;
    p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
    p.x = NULL;
    return p;
}

typedef struct {
    const sb_conv_desc *d;
    float *compact;
} subsample_job;

#define SUBSAMPLE_FLOATS ((size_t)1 << 14)   /* compact floats per chunk, about */

/* sb_chunk_fn: compact planes [chunk * per, ...), per a constant of the shape. */
static void subsample_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const subsample_job *job = ctx;
    const sb_conv_desc *d = job->d;
    const size_t map = d->out_h * d->out_w, planes = d->n * d->c;
    const size_t per = sb_max_size(1, SUBSAMPLE_FLOATS / map);
    const size_t end = sb_min_size(planes, (chunk + 1) * per);
    for (size_t i = chunk * per; i < end; ++i) {
        const float *plane = d->x + i * d->h * d->w;
        float *out = job->compact + i * map;
        for (size_t oy = 0; oy < d->out_h; ++oy, out += d->out_w) {
            const float *row = plane + oy * d->stride_h * d->w;
            for (size_t ox = 0; ox < d->out_w; ++ox) out[ox] = row[ox * d->stride_w];
        }
    }
}

/* The compact planes of x for subsamples(d), in workspace (for the caller
 * to release); null when out of memory. */
static float *subsample_input(const sb_conv_desc *d)
{
    size_t map, floats, bytes;
    if (!sb_mul_ok(d->out_h, d->out_w, &map) || !sb_mul3_ok(d->n, d->c, map, &floats) ||
        !sb_mul_ok(floats, sizeof(float), &bytes))
        return NULL;
    float *compact = sb_workspace_get(bytes ? bytes : sizeof(float));
    if (!compact || floats == 0) return compact;
    subsample_job job = {d, compact};
    const size_t per = sb_max_size(1, SUBSAMPLE_FLOATS / map);
    const size_t chunks = sb_ceil_div(d->n * d->c, per);
    sb_parallel_run(sb_threads_for_run(sb_thread_cap(d->max_threads),
                                        (double)floats * SB_NS_PER_PACKED, chunks),
                    chunks, subsample_chunk, &job);
    return compact;
}

/* The products of a planned call (call->d is d). */
static int run_call(const sb_conv_desc *d, conv_call *call, const sb_product_plan *plan,
                    const float *packed)
{
    sb_product_run run;
    void *own_planes = NULL;
    bind_run(d, call, plan, &run);
    call->packed = packed;
    int status = store_planes(d, call, &own_planes);
    if (status == SB_OK && call->lanes)
        status = sb_conv_lanes_run(d, call->tile, packed, call->planes, call->plane_floats,
                                   &call->rows);
    else if (status == SB_OK)
        status = sb_run_products(&run);
    sb_workspace_release(own_planes);
    return status;
}

static int run_groups(const sb_conv_desc *d)
{
    const sb_tile *tile = sb_conv_tile(d->isa->gemm, d->cout / d->groups);
    const float *packed;
    float *own_packed;
    int status = packed_weights(d, tile, &packed, &own_packed);
    if (status == SB_OK && sb_few_columns_applies(d)) {
        status = sb_few_columns_run(d, tile, packed);
    } else if (status == SB_OK && subsamples(d)) {
        sb_conv_desc p = pointwise_of(d);
        float *compact = (float *)(p.x = subsample_input(d));
        conv_call call;
        sb_product_plan plan;
        status = compact ? plan_call(&p, &call, &plan, tile) : SB_ERR_NO_MEMORY;
        if (status == SB_OK) status = run_call(&p, &call, &plan, packed);
        sb_workspace_release(compact);
    } else if (status == SB_OK) {
        conv_call call;
        sb_product_plan plan;
        status = plan_call(d, &call, &plan, tile);
        if (status == SB_OK) status = run_call(d, &call, &plan, packed);
    }
    sb_workspace_release(own_packed);
    return status;
}

/* Parses and checks the call, and finds its ISA. */
static int read_conv(const sb_conv2d_args *args, sb_conv_desc *d)
{
    int status = sb_conv_parse(args, d);
    if (status != SB_OK) return status;
    d->isa = sb_isa_supported(d->path);
    return d->isa ? SB_OK : SB_ERR_PATH;
}

int sb_conv2d(const sb_conv2d_args *args) { return sb_conv2d_fused(args, NULL); }

int sb_conv2d_fused(const sb_conv2d_args *args, const sb_conv_fused *fused)
{
    sb_conv_desc d;
    int status = read_conv(args, &d);
    if (status != SB_OK) return status;
    if (fused) d.affine = fused->affine, d.residual = fused->residual;
    if (d.n == 0 || d.cout == 0) return SB_OK;
    if (sb_conv_is_depthwise(d.c / d.groups, d.groups)) {
        if (d.packed) d.weights = d.packed, d.packed = NULL;
        return sb_depthwise_run(&d);
    }
    return run_groups(&d);
}

/* ---- a call prepared once, run many times (kernels/prepared.h) ---------------- */

enum { ROUTE_EMPTY, ROUTE_DEPTHWISE, ROUTE_FEW_COLUMNS, ROUTE_GROUPS };

struct sb_conv2d_call {
    sb_conv_desc d;               /* parsed; its pointers given per run */
    int route, packed;            /* packed: the weights come in sb_conv2d_pack's layout */
    int subsample;                /* ROUTE_GROUPS over compact planes (subsamples) */
    const sb_tile *tile;
    conv_call call;               /* ROUTE_GROUPS: planned, its pointers set per run */
    sb_product_plan plan;
};

size_t sb_conv2d_call_bytes(void) { return sizeof(sb_conv2d_call); }

int sb_conv2d_prepare(const sb_conv2d_args *args, sb_conv2d_call *c)
{
    memset(c, 0, sizeof *c);
    int status = sb_conv_parse_call(args, &c->d);
    if (status != SB_OK) return status;
    c->d.isa = sb_isa_supported(c->d.path);
    if (!c->d.isa) return SB_ERR_PATH;
    c->packed = args->packed != 0;
    c->d.x = NULL, c->d.y = NULL, c->d.weights = NULL, c->d.packed = NULL, c->d.bias = NULL;
    if (c->d.n == 0 || c->d.cout == 0) {
        c->route = ROUTE_EMPTY;
    } else if (sb_conv_is_depthwise(c->d.c / c->d.groups, c->d.groups)) {
        c->route = ROUTE_DEPTHWISE;
    } else {
        c->tile = sb_conv_tile(c->d.isa->gemm, c->d.cout / c->d.groups);
        c->route = sb_few_columns_applies(&c->d) ? ROUTE_FEW_COLUMNS : ROUTE_GROUPS;
        if (c->route == ROUTE_GROUPS) {
            c->subsample = subsamples(&c->d);
            if (c->subsample) {
                sb_conv_desc p = pointwise_of(&c->d);
                status = plan_call(&p, &c->call, &c->plan, c->tile);
            } else {
                status = plan_call(&c->d, &c->call, &c->plan, c->tile);
            }
        }
    }
    return status;
}

int sb_conv2d_run_prepared(const sb_conv2d_call *c, const float *x, const float *weights,
                           const float *bias, const sb_conv_fused *fused, float *y,
                           int max_threads)
{
    sb_conv_desc d = c->d;
    d.x = x, d.y = y, d.bias = bias, d.max_threads = sb_thread_cap(max_threads);
    if (fused) d.affine = fused->affine, d.residual = fused->residual;
    if (c->packed) d.packed = weights;
    else d.weights = weights;
    if (!sb_conv_pointers_ok(&d)) return SB_ERR_ARGUMENT;
    switch (c->route) {
    case ROUTE_EMPTY: return SB_OK;
    case ROUTE_DEPTHWISE:
        if (d.packed) d.weights = d.packed, d.packed = NULL;
        return sb_depthwise_run(&d);
    default: break;
    }
    const float *packed;
    float *own_packed;
    int status = packed_weights(&d, c->tile, &packed, &own_packed);
    if (status == SB_OK && c->route == ROUTE_FEW_COLUMNS) {
        status = sb_few_columns_run(&d, c->tile, packed);
    } else if (status == SB_OK && c->subsample) {
        sb_conv_desc p = pointwise_of(&d);
        float *compact = (float *)(p.x = subsample_input(&d));
        conv_call call = c->call;
        call.d = &p, call.rows.d = &p;
        status = compact ? run_call(&p, &call, &c->plan, packed) : SB_ERR_NO_MEMORY;
        sb_workspace_release(compact);
    } else if (status == SB_OK) {
        conv_call call = c->call;   /* this run's copy, pointing at this run's d */
        call.d = &d, call.rows.d = &d;
        status = run_call(&d, &call, &c->plan, packed);
    }
    sb_workspace_release(own_packed);
    return status;
}

int sb_conv2d_plan(const sb_conv2d_args *args, sb_plan_info *info)
{
    if (!info) return SB_ERR_ARGUMENT;
    sb_conv_desc d;
    int status = read_conv(args, &d);
    if (status != SB_OK) return status;
    memset(info, 0, sizeof *info);
    info->isa_path = d.path;
    if (d.n == 0 || d.cout == 0) return SB_OK;
    if (sb_conv_is_depthwise(d.c / d.groups, d.groups)) return sb_depthwise_describe(&d, info);
    const sb_tile *tile = sb_conv_tile(d.isa->gemm, d.cout / d.groups);
    if (sb_few_columns_applies(&d)) {
        sb_few_columns_describe(&d, tile, info);
        return SB_OK;
    }
    conv_call call;
    sb_product_plan plan;
    sb_product_run run;
    sb_conv_desc p = subsamples(&d) ? pointwise_of(&d) : d;   /* what runs */
    status = plan_call(&p, &call, &plan, tile);
    bind_run(&p, &call, &plan, &run);
    if (status == SB_OK && call.lanes) sb_conv_lanes_describe(&p, tile, &call.rows, info);
    else if (status == SB_OK) sb_describe_products(&run, p.path, info);
    if (status == SB_OK && subsamples(&d))   /* and the compact planes */
        info->workspace_bytes += (int64_t)(d.n * d.c * d.out_h * d.out_w * sizeof(float));
    return status;
}

size_t sb_conv2d_packed_bytes(int path, size_t cout, size_t cin_per_group, size_t kh, size_t kw,
                              size_t groups)
{
    const sb_isa *isa = sb_isa_get(path);
    if (!isa || !sb_path_built(path) || groups == 0 || cout % groups) return 0;
    /* In 64 bits whatever this build's size_t; each factor is bounded first
     * (2^31), so no product below can overflow; 0 when it cannot be held. */
    const uint64_t bound = (uint64_t)1 << 31;
    if (cin_per_group > bound || kh > bound || kw > bound || cout > bound) return 0;
    uint64_t k = (uint64_t)cin_per_group * kh;
    if (k > bound || (k *= kw) > bound) return 0;
    uint64_t rows = cout;
    if (!sb_conv_is_depthwise(cin_per_group, groups)) {   /* each group padded to whole strips */
        uint64_t cout_g = cout / groups;
        uint64_t mr = (uint64_t)sb_conv_tile(isa->gemm, (size_t)cout_g)->mr;
        rows = groups * ((cout_g + mr - 1) / mr * mr);
    }
    uint64_t floats = rows * k;
    if (floats > (uint64_t)SIZE_MAX / sizeof(float)) return 0;
    return (size_t)floats * sizeof(float);
}

int sb_conv2d_pack(int path, size_t cout, size_t cin_per_group, size_t kh, size_t kw,
                   size_t groups, const float *w, void *packed, size_t packed_size)
{
    const sb_isa *isa = sb_isa_get(path);
    if (!isa || !sb_path_built(path) || groups == 0 || cout % groups) return SB_ERR_ARGUMENT;
    size_t bytes = sb_conv2d_packed_bytes(path, cout, cin_per_group, kh, kw, groups);
    if (packed_size < bytes) return SB_ERR_ARGUMENT;
    if (bytes == 0)   /* nothing to pack, or too large to hold */
        return cout == 0 || cin_per_group == 0 || kh == 0 || kw == 0 ? SB_OK : SB_ERR_ARGUMENT;
    if (!w || !packed) return SB_ERR_ARGUMENT;
    size_t k = cin_per_group * kh * kw;
    if (sb_conv_is_depthwise(cin_per_group, groups)) {
        memcpy(packed, w, bytes);
        return SB_OK;
    }
    size_t cout_g = cout / groups;
    const sb_tile *tile = sb_conv_tile(isa->gemm, cout_g);
    size_t group_floats = packed_group_floats(tile, cout_g, k);
    for (size_t g = 0; g < groups; ++g)
        sb_pack_a_whole(tile, cout_g, k, w + g * cout_g * k, (ptrdiff_t)k, 1,
                        (float *)packed + g * group_floats);
    return SB_OK;
}
