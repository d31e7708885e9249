/* Depthwise convolution (C/G == 1, G > 1, any channel multiplier): a direct
 * kernel, both modes. docs/depthwise.md describes it.
 *
 * Output plane (n, oc) reads input plane (n, oc / mult), mult = Cout / C. Each
 * chunk copies the input rows it needs into its thread's scratch as a
 * zero-padded block split by column phase (padded_rows.c). Then every tap (ky, kx) of output (oy, ox) is the float at
 *   row base(oy) + off[ky*KW + kx] + ox
 * with off[] the same for all outputs, so the path's kernel (sb_dw_kernel_fn,
 * ukernel_template.h) reads contiguous vectors whatever the stride and
 * dilation.
 *
 * A layer at unit strides whose output map is its input's size, on a path
 * with the kernel (sb_dw_flat_fn), reads each plane in place instead: output
 * j reads input j + off[t] of its plane for tap t, the padding being masked
 * lanes loaded as +0 (`flat` below), two planes at a time where the path has
 * the pair kernel. Every other layer, on a path with the pitched kernel
 * (sb_dw_pitched_fn), stores its rows as phase planes (split by row and
 * column phase, rows pitch floats apart), so that output (oy, ox) is flat
 * position oy*pitch + ox and reads tap t at + off[t] (`pitched` below). The
 * same operations in the same order, so the same bits; no padded copy for
 * the first, and every lane of a narrow map used by both.
 * This file knows no ISA. */
#include <string.h>
#include "kernels/conv_internal.h"
#include "framework/checked.h"
#include "framework/epilogue.h"
#include "framework/memory.h"
#include "framework/step.h"

/* Work of one chunk, in taps (multiply-adds): whole planes are grouped up to
 * this; a plane of more than DW_BAND_MIN_TAPS is cut into bands of rows of
 * about this. Constants of the shape, never of the thread count. */
#define DW_CHUNK_TAPS ((size_t)1 << 15)
#define DW_BAND_MIN_TAPS (4 * DW_CHUNK_TAPS)
/* Floats after the stored rows, zeroed: the kernels read up to 15 past a
 * row (into lanes they do not store). */
#define DW_SLACK 16
/* One thread's rate for the pool's estimate (measured roughly with avx2 on
 * 3x3 layers; the other paths are slower, which only wakes threads later),
 * and the factor the estimate is raised by so that small layers still get
 * threads, as the convolution does. */
#define DW_TAPS_PER_NS 16.0
#define DW_NS_PER_COPIED 0.25
#define DW_EST_FACTOR 4.0
/* Planes read in place have fewer outputs, kernels fewer taps x outputs and
 * a smaller dilated extent (so smaller padding) than this: the mask builder's
 * coordinates are 32-bit. */
#define FLAT_MAX_PLANE ((size_t)1 << 30)
/* Zeros after a pitched block: the lanes past a row's last output (and past
 * the band's last row) read up to a row and a vector beyond the block. */
#define PITCHED_SLACK(pitch) ((pitch) + 2 * SB_DW_FLAT_LANES)
/* The lanes route: a band's stored block of at most this many floats (or
 * one output row's, when larger), kernels of at most this many taps, padded
 * rows of at most this many pixels (so that no size below overflows). */
#define DW_LANES_BLOCK_FLOATS ((size_t)1 << 14)
/* The lanes route's rates for the pool's estimate: four times the other
 * kernels' taps a nanosecond (they hold 16 positions a vector, these 16
 * channels, and measured two to three times faster on Zen 5: an optimistic
 * figure, which only wakes threads later), and the stored block's floats at
 * a sixteenth of the padded rows' copy cost. */
#define DW_LANES_TAPS_PER_NS (4.0 * DW_TAPS_PER_NS)
#define DW_LANES_NS_PER_STORED (DW_NS_PER_COPIED / 16.0)
#define DW_LANES_MIN_CHANNELS 8
#define DW_LANES_FLAT_TAPS 16
#define DW_LANES_MAX_TAPS 1024
#define DW_LANES_MAX_PW ((size_t)1 << 24)
/* The stride-2 route's output rows: at least three vectors of outputs (its
 * vectors hold a row's neighbouring outputs: on narrower maps most lanes
 * would idle, and MobileNetV3-large's 28-, 14- and 7-wide stride-2 layers
 * ran 1.1 to 3 times slower than on the lanes route, its 56-wide one 1.2
 * times faster), and at most DW_STRIDE2_MAX_OW (so that its scratch size
 * cannot overflow). */
#define DW_STRIDE2_MIN_OW 48
#define DW_STRIDE2_MAX_OW ((size_t)1 << 24)

typedef struct {
    const sb_conv_desc *d;
    sb_depthwise_kernel_fn kernel;
    const ptrdiff_t *off;     /* taps offsets into the stored rows */
    sb_padded_rows rows;      /* the stored rows' layout */
    size_t taps, mult;
    size_t band_rows, bands;  /* output rows per band; bands == 1: whole planes */
    size_t planes, planes_per_chunk;
    sb_dw_flat_fn flat;       /* planes read in place (null: padded rows) */
    sb_dw_flat_pair_fn flat_pair;   /* two of them at once (null: one at a time) */
    const uint16_t *masks;    /* flat: per vector of outputs, per tap */
    sb_dw_pitched_fn pitched; /* planes stored as phase planes (null: rows or flat) */
    const sb_dw_lane_map *map;   /* pitched: per vector of a band's block */
    size_t rows_ph, pitch;    /* pitched: rows of a phase plane, floats between rows */
    /* lanes (null: another route): SB_DW_LANES channels a block, a chunk
     * one block of one image over a band of output rows */
    sb_dw_lanes_fn lanes;
    size_t blocks;            /* channel blocks of an image */
    size_t lane_block_floats; /* a band's stored block: padded rows of pw pixels */
    size_t lane_out_floats;   /* a band's outputs, pixel by pixel */
    sb_dw_stride2_fn stride2; /* planes at stride 2 read in place (null: another route) */
    float *scratch;
    size_t scratch_floats;    /* per thread */
    int exact;
} dw_call;


/* The epilogue of `count` finished outputs of output channel oc at out. */
static void plane_epilogue(const sb_conv_desc *d, size_t oc, float *out, size_t count)
{
    const sb_epilogue_ops e = {
        .row_bias = d->bias ? d->bias + oc : NULL,
        .row_affine = d->affine ? d->affine + 4 * oc : NULL,
        .residual = d->residual ? d->residual + (out - d->y) : NULL,
        .activation = d->activation, .fast = d->mode == SB_MODE_FAST};
    d->isa->gemm->epilogue(out, 0, 1, count, &e);   /* at the path's width */
}

/* The lanes route's chunk: block b of image n over band `band`'s output
 * rows. The block's padded input rows are stored pixel by pixel (+0 in the
 * padding), its weights tap by tap; the kernel's outputs, pixel by pixel,
 * are turned back into the planes' rows and finished there. */
static void lanes_chunk(const dw_call *call, size_t chunk, float *scratch)
{
    const sb_conv_desc *d = call->d;
    const sb_dwconv_config *dw = d->isa->dwconv;
    const size_t L = SB_DW_LANES, per_image = call->blocks * call->bands;
    const size_t n = chunk / per_image, b = chunk % per_image / call->bands;
    const size_t band = chunk % call->bands;
    const size_t c0 = b * L, channels = sb_min_size(L, d->c - c0);
    const size_t r0 = band * call->band_rows;
    const size_t rows = sb_min_size(call->band_rows, d->out_h - r0);
    const size_t pw = call->rows.pw, prow0 = r0 * d->stride_h;
    const size_t in_rows = (rows - 1) * d->stride_h + (d->kh - 1) * d->dil_h + 1;
    float *block = scratch, *outs = scratch + call->lane_block_floats;
    float *w = outs + call->lane_out_floats;
    /* stored rows [s0, s1) are input rows; columns [pl, pl + cols) input
     * columns; the rest is padding, +0 */
    const size_t top = d->pad_top, pl = d->pad_left, h = d->h;
    const size_t s0 = prow0 < top ? sb_min_size(top - prow0, in_rows) : 0;
    const size_t s1 = h + top > prow0 ? sb_max_size(s0, sb_min_size(h + top - prow0, in_rows)) : s0;
    const size_t cols = pw > pl ? sb_min_size(d->w, pw - pl) : 0;
    const size_t row = pw * L, left = sb_min_size(pl, pw) * L, right = row - left - cols * L;
    memset(block, 0, s0 * row * sizeof(float));
    for (size_t r = s0; r < s1; ++r) {
        memset(block + r * row, 0, left * sizeof(float));
        memset(block + r * row + left + cols * L, 0, right * sizeof(float));
    }
    memset(block + s1 * row, 0, (in_rows - s1) * row * sizeof(float));
    const size_t plane_in = h * d->w, plane_out = d->out_h * d->out_w;
    if (s0 < s1 && cols > 0)
        dw->lanes_gather(d->x + (n * d->c + c0) * plane_in + (prow0 + s0 - top) * d->w, channels,
                         plane_in, s1 - s0, d->w, cols, block + (s0 * pw + pl) * L, pw * L);
    for (size_t t = 0; t < call->taps; ++t)
        for (size_t l = 0; l < L; ++l)
            w[t * L + l] = l < channels ? d->weights[(c0 + l) * call->taps + t] : 0.0f;
    call->lanes(rows, d->out_w, call->taps, w, call->off, block, d->stride_h * pw * L,
                d->stride_w * L, outs);
    float *out = d->y + (n * d->cout + c0) * plane_out + r0 * d->out_w;
    dw->lanes_scatter(outs, rows * d->out_w, channels, out, plane_out);
    for (size_t l = 0; l < channels; ++l)
        plane_epilogue(d, c0 + l, out + l * plane_out, rows * d->out_w);
}

static void dw_chunk(void *ctx, size_t chunk, int thread_index)
{
    const dw_call *call = ctx;
    const sb_conv_desc *d = call->d;
    float *scratch = call->scratch + (size_t)thread_index * call->scratch_floats;
    if (call->lanes) {
        lanes_chunk(call, chunk, scratch);
        return;
    }
    const size_t plane_out = d->out_h * d->out_w;
    size_t p0, p1, r0, r1;
    if (call->bands > 1) {
        p0 = chunk / call->bands, p1 = p0 + 1;
        r0 = (chunk % call->bands) * call->band_rows;
        r1 = r0 + call->band_rows < d->out_h ? r0 + call->band_rows : d->out_h;
    } else {
        p0 = chunk * call->planes_per_chunk;
        p1 = p0 + call->planes_per_chunk < call->planes ? p0 + call->planes_per_chunk
                                                         : call->planes;
        r0 = 0, r1 = d->out_h;
    }
    if (call->stride2) {
        for (size_t p = p0; p < p1; ++p) {
            size_t n = p / d->cout, oc = p % d->cout;
            float *out = d->y + p * plane_out + r0 * d->out_w;
            call->stride2(d->x + (n * d->c + oc / call->mult) * d->h * d->w, d->h, d->w, d->kh,
                          d->kw, d->pad_top, d->pad_left, d->weights + oc * call->taps, r0,
                          r1 - r0, d->out_w, out, scratch);
            plane_epilogue(d, oc, out, (r1 - r0) * d->out_w);
        }
        return;
    }
    if (call->flat) {
        size_t p = p0;
        for (; call->flat_pair && p + 2 <= p1; p += 2) {   /* two planes share the masks */
            size_t n_a = p / d->cout, oc_a = p % d->cout, n_b = (p + 1) / d->cout,
                   oc_b = (p + 1) % d->cout;
            float *out = d->y + p * plane_out;
            call->flat_pair(plane_out, call->taps, d->weights + oc_a * call->taps,
                            d->weights + oc_b * call->taps, call->off, call->masks,
                            d->x + (n_a * d->c + oc_a / call->mult) * plane_out,
                            d->x + (n_b * d->c + oc_b / call->mult) * plane_out, out,
                            out + plane_out);
            plane_epilogue(d, oc_a, out, plane_out);
            plane_epilogue(d, oc_b, out + plane_out, plane_out);
        }
        for (; p < p1; ++p) {
            size_t n = p / d->cout, oc = p % d->cout;
            float *out = d->y + p * plane_out;
            call->flat(plane_out, call->taps, d->weights + oc * call->taps, call->off, call->masks,
                       d->x + (n * d->c + oc / call->mult) * plane_out, out);
            plane_epilogue(d, oc, out, plane_out);
        }
        return;
    }
    const size_t rows = r1 - r0;
    const size_t stored = (rows - 1) * d->stride_h + (d->kh - 1) * d->dil_h + 1;
    size_t have = (size_t)-1;   /* the input plane in scratch */
    if (call->pitched) {
        const size_t limit = rows * call->pitch, vecs = sb_ceil_div(limit, SB_DW_FLAT_LANES);
        for (size_t p = p0; p < p1; ++p) {
            size_t n = p / d->cout, oc = p % d->cout;
            size_t in_plane = n * d->c + oc / call->mult;
            if (in_plane != have) {
                sb_padded_build_phase_planes(&call->rows, scratch, in_plane, r0 * d->stride_h,
                                             stored, call->rows_ph, PITCHED_SLACK(call->pitch));
                have = in_plane;
            }
            float *out = d->y + p * plane_out + r0 * d->out_w;
            call->pitched(vecs, limit, call->taps, d->weights + oc * call->taps, call->off,
                          scratch, call->map, out);
            plane_epilogue(d, oc, out, rows * d->out_w);
        }
        return;
    }
    for (size_t p = p0; p < p1; ++p) {
        size_t n = p / d->cout, oc = p % d->cout;
        size_t in_plane = n * d->c + oc / call->mult;
        if (in_plane != have) {
            sb_padded_build_rows(&call->rows, scratch, in_plane, r0 * d->stride_h, stored,
                                 DW_SLACK);
            have = in_plane;
        }
        float *out = d->y + p * plane_out + r0 * d->out_w;
        call->kernel(rows, d->out_w, call->taps, d->weights + oc * call->taps, call->off, scratch,
                     (ptrdiff_t)(d->stride_h * call->rows.rs), out, (ptrdiff_t)d->out_w);
        plane_epilogue(d, oc, out, rows * d->out_w);
    }
}

/* The lanes route: one input channel per output channel, at least
 * DW_LANES_MIN_CHANNELS of them, on a path with the kernels, taps and padded
 * rows within bounds; a layer whose planes can be read in place keeps that
 * route below DW_LANES_FLAT_TAPS taps (3x3 layers: there the two ran
 * alike, the lanes route's transposes costing what its kernel saves). */
static int lanes_applies(const sb_conv_desc *d, const dw_call *call)
{
    const sb_dwconv_config *dw = d->isa->dwconv;
    if (call->flat && call->taps < DW_LANES_FLAT_TAPS) return 0;
    return dw->lanes_exact && dw->lanes_fast && dw->lanes_gather && dw->lanes_scatter &&
           call->mult == 1 && d->c >= DW_LANES_MIN_CHANNELS && call->taps <= DW_LANES_MAX_TAPS &&
           call->rows.pw <= DW_LANES_MAX_PW;
}

/* Its chunks (image, channel block, band of output rows: bands of at most
 * DW_LANES_BLOCK_FLOATS stored floats, whole maps when they fit), scratch
 * and threads. */
static int plan_lanes(const sb_conv_desc *d, int at_run, dw_call *call, size_t *chunks,
                      int *threads, size_t *workspace_bytes, double *est_ns)
{
    const size_t L = SB_DW_LANES, pw = call->rows.pw;
    const size_t reach_h = (d->kh - 1) * d->dil_h;   /* kh*dil_h < 2^62: parse checks */
    const size_t row_floats = pw * L;                /* pw <= DW_LANES_MAX_PW */
    const size_t fit = DW_LANES_BLOCK_FLOATS / row_floats;   /* stored rows in a band */
    size_t band_rows = fit > reach_h + 1 ? (fit - reach_h - 1) / d->stride_h + 1 : 1;
    band_rows = sb_min_size(band_rows, d->out_h);
    call->lanes = call->exact ? d->isa->dwconv->lanes_exact : d->isa->dwconv->lanes_fast;
    call->blocks = sb_ceil_div(d->c, L);
    call->band_rows = band_rows, call->bands = sb_ceil_div(d->out_h, band_rows);
    size_t in_rows, block, outs, weights, per_thread, images_blocks, scratch_bytes, off_bytes;
    if (!sb_mul_ok(band_rows - 1, d->stride_h, &in_rows) ||
        !sb_add_ok(in_rows, reach_h + 1, &in_rows) ||
        !sb_mul_ok(in_rows, row_floats, &block) ||
        !sb_mul3_ok(band_rows, d->out_w, L, &outs) ||
        !sb_mul_ok(call->taps, L, &weights) ||
        !sb_add_ok(block, outs, &per_thread) || !sb_add_ok(per_thread, weights, &per_thread) ||
        !sb_mul_ok(d->n, call->blocks, &images_blocks) ||
        !sb_mul_ok(images_blocks, call->bands, chunks) ||
        !sb_mul_ok(per_thread, sizeof(float), &scratch_bytes))
        return SB_ERR_NO_MEMORY;
    call->lane_block_floats = block, call->lane_out_floats = outs;
    call->scratch_floats = per_thread;   /* each part a multiple of L floats: 64-byte aligned */
    const double total_taps = (double)call->planes * (double)d->out_h * (double)d->out_w *
                              (double)call->taps;
    *est_ns = DW_EST_FACTOR * (total_taps / DW_LANES_TAPS_PER_NS +
                               (double)*chunks * (double)block * DW_LANES_NS_PER_STORED);
    sb_step_plan plan = sb_plan_step(*chunks, 1, *est_ns);
    *threads = at_run ? sb_threads_for_run(sb_thread_cap(d->max_threads), plan.est_ns, plan.chunks)
                      : sb_step_threads(&plan, d->max_threads);
    /* the threads' scratch, then the taps' offsets */
    if (!sb_mul_ok((size_t)*threads, scratch_bytes, &scratch_bytes) ||
        !sb_mul_ok(call->taps, sizeof(ptrdiff_t), &off_bytes) ||
        !sb_add_ok(scratch_bytes, off_bytes, workspace_bytes))
        return SB_ERR_NO_MEMORY;
    return SB_OK;
}

/* The lanes route's tap offsets: tap (ky, kx) of output (0, 0) at stored
 * pixel (ky*dh, kx*dw) of the band's block. */
static void lanes_taps(const dw_call *call, ptrdiff_t *off)
{
    const sb_conv_desc *d = call->d;
    for (size_t ky = 0; ky < d->kh; ++ky)
        for (size_t kx = 0; kx < d->kw; ++kx)
            off[ky * d->kw + kx] =
                (ptrdiff_t)((ky * d->dil_h * call->rows.pw + kx * d->dil_w) * SB_DW_LANES);
}

/* The call's plan: kernel, row layout, chunking, scratch, threads (at_run:
 * the run's, sb_threads_for_run; else the plan's figure). No memory is
 * touched. SB_OK, or SB_ERR_NO_MEMORY when a size overflows. */
static int plan_call(const sb_conv_desc *d, int at_run, dw_call *call, size_t *chunks,
                     int *threads, size_t *workspace_bytes, double *est_ns)
{
    memset(call, 0, sizeof *call);
    call->d = d;
    call->exact = d->mode == SB_MODE_EXACT;
    call->kernel = call->exact ? d->isa->dwconv->exact : d->isa->dwconv->fast;
    if (d->c == 0 || d->cout % d->c) return SB_ERR_ARGUMENT;
    call->mult = d->cout / d->c;

    /* Sizes; any overflow means the call cannot fit in memory. */
    size_t taps, plane_out, planes, plane_taps, reach_h;
    if (!sb_mul_ok(d->kh, d->kw, &taps) || !sb_mul_ok(d->out_h, d->out_w, &plane_out) ||
        !sb_mul_ok(d->n, d->cout, &planes) || !sb_mul_ok(plane_out, taps, &plane_taps) ||
        !sb_mul_ok(d->kh - 1, d->dil_h, &reach_h))
        return SB_ERR_NO_MEMORY;
    call->taps = taps, call->planes = planes;
    if (!sb_padded_rows_size(d, &call->rows)) return SB_ERR_NO_MEMORY;

    if (plane_taps > DW_BAND_MIN_TAPS) {
        size_t row_taps = d->out_w * taps;
        call->band_rows = row_taps >= DW_CHUNK_TAPS ? 1 : DW_CHUNK_TAPS / row_taps;
        call->bands = sb_ceil_div(d->out_h, call->band_rows);
        if (call->bands == 1) call->band_rows = d->out_h;
    } else {
        call->band_rows = d->out_h, call->bands = 1;
        call->planes_per_chunk = plane_taps >= DW_CHUNK_TAPS ? 1 : DW_CHUNK_TAPS / plane_taps;
    }
    const sb_dwconv_config *dw = d->isa->dwconv;
    /* Read in place: unit strides and the output map the input's (flat
     * offsets), whole planes, on a path with the kernel. */
    if (call->bands == 1 && d->stride_h == 1 && d->stride_w == 1 && d->out_h == d->h &&
        d->out_w == d->w && plane_out + 16 <= FLAT_MAX_PLANE && plane_taps <= FLAT_MAX_PLANE &&
        d->dil_h <= FLAT_MAX_PLANE / d->kh && d->dil_w <= FLAT_MAX_PLANE / d->kw)
        call->flat = call->exact ? dw->flat_exact : dw->flat_fast;
    /* Read in place at stride 2: the path's kernel, no dilation, output rows
     * of DW_STRIDE2_MIN_OW or more. */
    if (d->stride_h == 2 && d->stride_w == 2 && d->dil_h == 1 && d->dil_w == 1 &&
        d->kh <= SB_DW_STRIDE2_MAX_K && d->kw <= SB_DW_STRIDE2_MAX_K &&
        d->pad_left <= 2 * SB_DW_STRIDE2_MARGIN && d->out_w >= DW_STRIDE2_MIN_OW &&
        d->out_w <= DW_STRIDE2_MAX_OW)
        call->stride2 = call->exact ? dw->stride2_exact : dw->stride2_fast;
    if (!call->stride2 && lanes_applies(d, call)) {
        call->flat = NULL;
        return plan_lanes(d, at_run, call, chunks, threads, workspace_bytes, est_ns);
    }
    if (call->flat) call->flat_pair = call->exact ? dw->flat_pair_exact : dw->flat_pair_fast;
    if (!call->flat && !call->stride2)
        call->pitched = call->exact ? dw->pitched_exact : dw->pitched_fast;
    if (call->bands > 1) {
        if (!sb_mul_ok(planes, call->bands, chunks)) return SB_ERR_NO_MEMORY;
    } else {
        *chunks = sb_ceil_div(planes, call->planes_per_chunk);
    }

    /* Per thread: the stored rows of one band or plane, then the slack,
     * rounded up to 64 bytes. */
    size_t stored_rows, stored_floats;
    if (!sb_mul_ok(call->band_rows - 1, d->stride_h, &stored_rows) ||
        !sb_add_ok(stored_rows, reach_h + 1, &stored_rows) ||
        !sb_mul_ok(stored_rows, call->rows.rs, &stored_floats) ||
        !sb_add_ok(stored_floats, DW_SLACK + 15, &call->scratch_floats) ||
        call->scratch_floats > (size_t)PTRDIFF_MAX / sizeof(float))
        return SB_ERR_NO_MEMORY;
    call->scratch_floats &= ~(size_t)15;
    if (call->flat) call->scratch_floats = 0, stored_floats = 0;   /* nothing is copied */
    if (call->stride2)   /* the rows in use, split by parity (whole vectors: 64-byte units) */
        call->scratch_floats = SB_DW_STRIDE2_SCRATCH(d->kh, d->out_w), stored_floats = 0;
    size_t map_bytes = 0;
    if (call->pitched) {   /* the band's phase planes, rows pws apart, then the slack */
        size_t phases, block;
        call->pitch = call->rows.pws;
        call->rows_ph = sb_ceil_div(stored_rows, d->stride_h);
        if (!sb_mul_ok(d->stride_h, d->stride_w, &phases) ||
            !sb_mul3_ok(phases, call->rows_ph, call->pitch, &block) ||
            !sb_add_ok(block, PITCHED_SLACK(call->pitch) + 15, &call->scratch_floats) ||
            call->scratch_floats > (size_t)PTRDIFF_MAX / sizeof(float) ||
            !sb_mul3_ok(sb_ceil_div(call->band_rows * call->pitch, SB_DW_FLAT_LANES),
                        sizeof(sb_dw_lane_map), 1, &map_bytes))
            return SB_ERR_NO_MEMORY;
        call->scratch_floats &= ~(size_t)15;
        stored_floats = block;
    }

    double total_taps = (double)planes * (double)plane_taps;
    double copied = (double)*chunks * (double)stored_floats;
    *est_ns = DW_EST_FACTOR * (total_taps / DW_TAPS_PER_NS + copied * DW_NS_PER_COPIED);
    /* one unit: a band, or a group of whole planes (the chunking above) */
    sb_step_plan plan = sb_plan_step(*chunks, 1, *est_ns);
    *threads = at_run ? sb_threads_for_run(sb_thread_cap(d->max_threads), plan.est_ns, plan.chunks)
                      : sb_step_threads(&plan, d->max_threads);

    /* One workspace: every thread's scratch, the tap offsets, the phase
     * bounds (stride_w <= rs, so those fit whenever the scratch does). */
    size_t scratch_bytes, off_bytes, bounds_bytes, mask_bytes = 0;
    if (!sb_mul_ok((size_t)*threads * sizeof(float), call->scratch_floats, &scratch_bytes) ||
        !sb_mul_ok(taps, sizeof(ptrdiff_t), &off_bytes) ||
        !sb_mul_ok(2 * sizeof(size_t), d->stride_w, &bounds_bytes) ||
        (call->flat && !sb_mul3_ok(sb_ceil_div(plane_out, SB_DW_FLAT_LANES), taps,
                                   sizeof(uint16_t), &mask_bytes)) ||
        !sb_add_ok(off_bytes, bounds_bytes, workspace_bytes) ||
        !sb_add_ok(*workspace_bytes, scratch_bytes, workspace_bytes) ||
        !sb_add_ok(*workspace_bytes, mask_bytes, workspace_bytes) ||
        !sb_add_ok(*workspace_bytes, map_bytes, workspace_bytes))
        return SB_ERR_NO_MEMORY;
    return SB_OK;
}

/* Pitched blocks: tap t = (ky, kx) of output j = oy*pitch + ox at block
 * float j + off[t] (sb_padded_build_phase_planes), and per vector of a full
 * band's outputs the lanes that are outputs (ox < OW) and where they go. */
static void pitched_taps(const dw_call *call, ptrdiff_t *off, sb_dw_lane_map *map)
{
    const sb_conv_desc *d = call->d;
    const size_t pitch = call->pitch;   /* the rows' pws */
    sb_phase_tap_offsets(&call->rows, 1, 0, call->rows_ph, off);
    const size_t vecs = sb_ceil_div(call->band_rows * pitch, SB_DW_FLAT_LANES);
    for (size_t v = 0; v < vecs; ++v) {
        const size_t j0 = v * SB_DW_FLAT_LANES, col0 = j0 % pitch;
        unsigned mask = 0;
        for (size_t l = 0; l < SB_DW_FLAT_LANES; ++l)
            if ((j0 + l) % pitch < d->out_w) mask |= 1u << l;
        map[v].start = j0 / pitch * d->out_w + (col0 < d->out_w ? col0 : d->out_w);
        map[v].mask = (uint16_t)mask;
    }
}

/* A plane read in place: tap t = (ky, kx) of output j at input j + off[t];
 * the path's masks of the taps inside the input. */
static void flat_taps(const sb_conv_desc *d, ptrdiff_t *off, uint16_t *masks)
{
    for (size_t ky = 0; ky < d->kh; ++ky)
        for (size_t kx = 0; kx < d->kw; ++kx)
            off[ky * d->kw + kx] =
                ((ptrdiff_t)(ky * d->dil_h) - (ptrdiff_t)d->pad_top) * (ptrdiff_t)d->w +
                (ptrdiff_t)(kx * d->dil_w) - (ptrdiff_t)d->pad_left;
    d->isa->dwconv->flat_masks(d->h, d->w, d->kh, d->kw, d->dil_h, d->dil_w, d->pad_top,
                               d->pad_left, masks);
}

int sb_depthwise_run(const sb_conv_desc *d)
{
    dw_call call;
    size_t chunks, workspace_bytes;
    int threads;
    double est_ns;
    int status = plan_call(d, 1, &call, &chunks, &threads, &workspace_bytes, &est_ns);
    if (status != SB_OK) return status;
    unsigned char *workspace = sb_workspace_get(workspace_bytes);
    if (!workspace) return SB_ERR_NO_MEMORY;
    size_t scratch_bytes = (size_t)threads * sizeof(float) * call.scratch_floats;
    size_t off_bytes = call.taps * sizeof(ptrdiff_t);
    call.scratch = (float *)(void *)workspace;
    ptrdiff_t *off = (ptrdiff_t *)(void *)(workspace + scratch_bytes);
    size_t *lo = (size_t *)(void *)(workspace + scratch_bytes + off_bytes);
    call.rows.lo = lo, call.rows.hi = lo + d->stride_w;
    call.off = off;
    if (call.stride2) {
        /* (the kernel finds its taps itself) */
    } else if (call.lanes) {
        lanes_taps(&call, off);
    } else if (call.flat) {   /* the masks after the phase bounds */
        uint16_t *masks = (uint16_t *)(void *)(lo + 2 * d->stride_w);
        flat_taps(d, off, masks);
        call.masks = masks;
    } else if (call.pitched) {   /* the lane maps after the phase bounds */
        sb_padded_phase_bounds(&call.rows, lo, lo + d->stride_w);
        sb_dw_lane_map *map = (sb_dw_lane_map *)(void *)(lo + 2 * d->stride_w);
        pitched_taps(&call, off, map);
        call.map = map;
    } else {   /* one input channel: the taps of plane 0 */
        sb_padded_tap_offsets(&call.rows, 1, 0, off);
        sb_padded_phase_bounds(&call.rows, lo, lo + d->stride_w);
    }

    sb_parallel_run(threads, chunks, dw_chunk, &call);
    sb_workspace_release(workspace);
    return SB_OK;
}

int sb_depthwise_describe(const sb_conv_desc *d, sb_plan_info *info)
{
    dw_call call;
    size_t chunks, workspace_bytes;
    int threads;
    double est_ns;
    int status = plan_call(d, 0, &call, &chunks, &threads, &workspace_bytes, &est_ns);
    if (status != SB_OK) return status;
    info->route = SB_ROUTE_DEPTHWISE;
    /* planes read in place, blocks of channels stored pixel by pixel, or
     * planes stored padded */
    info->b_source = call.flat || call.stride2 ? SB_B_IN_PLACE
                     : call.lanes              ? SB_B_PER_PANEL
                                               : SB_B_PER_STRIP;
    info->products = (int64_t)call.planes;
    info->m = (int64_t)d->out_h, info->n = (int64_t)d->out_w, info->k = (int64_t)call.taps;
    info->compute_chunks = (int64_t)chunks;
    info->threads = threads;
    info->waves = 1;
    info->workspace_bytes = (int64_t)workspace_bytes;
    info->estimated_ns = (int64_t)est_ns;
    return SB_OK;
}
