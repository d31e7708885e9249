/* A convolution with its output channels in the vector lanes.
 *
 * The tile route (conv.c) puts output positions in the lanes, NR of them per
 * strip, so a map of 49 positions (7x7) computes 64 and throws 15 away, and a
 * 3x3 layer over 14x14 read by offsets computes 224 for 196. This route puts
 * output channels in the lanes instead (one packed strip of SB_LANES_WIDTH
 * weights per vector, the weights packed for the tile route unchanged) and
 * broadcasts the input, for up to SB_LANES_MAX_ROWS consecutive output
 * positions of one output row at a time: every position it computes is kept.
 *
 * Tap p = (c, ky, kx) of output (oy, ox) is the float
 *   tap_off[p] + oy * row_step + ox
 * of the image and group's planes: the input itself (pointwise, or read in
 * place) or its stored padded rows (padded_rows.c), with
 *   tap_off[p] = c*plane_floats + ky*dh*rs + phase(kx*dw)*pws + pos(kx*dw),
 *   row_step = sh*rs,
 * the gatherer's addressing (conv.c), so that the positions of one output
 * row read consecutive floats for every tap. When row_step is the output
 * width (pointwise) the map is one row of OH*OW positions.
 *
 * Each output is its taps in increasing p from +0 with the tile kernel's
 * operations (sb_lanes_kernel_fn), k-block after k-block, so the route gives
 * the tile route's bits in both modes. A chunk is up to SB_LANES_MAX_STRIPS
 * strips of one image and group by a run of position tiles, a constant of
 * the shape; the kernel stores the last k-block's sums to the NCHW output,
 * turned over in registers, and the chunk runs the epilogue (bias,
 * BatchNormalization, residual, activation, canonical NaN) on them. */
#include <string.h>
#include "kernels/conv_internal.h"
#include "framework/checked.h"
#include "framework/memory.h"
#include "framework/step.h"
#include "isa/cpu_x86.h"

/* When the route is taken, from single layers measured both ways on a Zen 4
 * (bench/results/conv-lanes-2026-12-06.md): when the pixel tile would
 * compute more than WASTE_TAPS (a kernel reading taps from stored planes) or
 * WASTE_POINTWISE (a pointwise layer, whose planes are far apart) times the
 * outputs it keeps; and in fast mode for every layer with taps and at least
 * FAST_TAPS_COUT output channels per group, where the fused kernel beats the
 * pixel tile's gather whatever the map (stems, strided and 5x5 layers). In
 * exact mode the same layers take it when their stride is 1 or they are a
 * stem (at most EXACT_STEM_CIN input channels per group): there the exact
 * kernel beat the exact pixel tiles by 2-23% (YOLOv8n's, SqueezeNet's and
 * magika's layers, bench/results/conv-lanes-exact-2026-12-06.md), while
 * strided layers with more channels were 0.95-1.05x either way. */
#define WASTE_TAPS 1.10
#define WASTE_POINTWISE 1.20
#define FAST_TAPS_COUT 48
#define EXACT_STEM_CIN 4
/* Position tiles per chunk: a chunk runs k-block by k-block over all of
 * them, so that a block's weights (SB_KC x 24 floats, 24 KiB) stay in the
 * first-level cache while its tiles read them, and keeps their sums in
 * scratch (5 KiB). */
#define CHUNK_TILES 8

typedef union { uint32_t u; float f; } bits32;

typedef struct {
    const sb_conv_desc *d;
    sb_lanes_kernel_fn kernel;
    sb_lanes_store_fn store;          /* null: the epilogue runs on the output rows */
    const float *packed;              /* every group's weights, packed for the conv tile */
    size_t cin_g, cout_g, k, cols, group_floats;
    size_t strips;                    /* packed strips per group */
    size_t max_strips;                /* the kernel's most strips a call */
    size_t blocks;                    /* chunks' channel blocks per group */
    const float *planes;              /* image n, group g at planes + (n*C + g*cin_g)*plane_floats */
    size_t plane_floats;
    const ptrdiff_t *tap_off;         /* k entries */
    size_t map_rows, map_cols, row_step;
    size_t row_tiles;                 /* position tiles per map row */
    size_t tiles_per_chunk, parts;    /* chunks per (image, group, block) */
} lanes_job;

/* The 512-bit kernels run: the path has them and the CPU does not split
 * 512-bit operations (where the 256-bit ones run at full speed). */
static int lanes_wide(const sb_gemm_config *gemm, int splits_512)
{
    return !splits_512 && gemm->lanes_wide_exact && gemm->lanes_wide_fast;
}

int sb_conv_lanes_applies(const sb_conv_desc *d, const sb_tile *pixel_tile, size_t pixel_cols,
                          int pixel_gathers, int splits_512)
{
    const sb_gemm_config *gemm = d->isa->gemm;
    const int wide = lanes_wide(gemm, splits_512);
    if (!gemm->lanes_exact || !gemm->lanes_fast ||
        (gemm->lanes_need_split && !splits_512 && !wide))
        return 0;
    const size_t cout_g = d->cout / d->groups, cols = d->out_h * d->out_w;
    if (d->c == 0 || cols <= SB_FEW_COLUMNS_MAP ||
        (size_t)sb_conv_tile(gemm, cout_g)->mr != SB_LANES_WIDTH)
        return 0;
    const int pointwise = sb_conv_is_pointwise(d);
    if (!pointwise && cout_g >= FAST_TAPS_COUT) {
        const int unit_stride = d->stride_h == 1 && d->stride_w == 1;
        /* Zen 4's 256-bit rule */
        if (!wide && (d->mode == SB_MODE_FAST || unit_stride || d->c / d->groups <= EXACT_STEM_CIN))
            return 1;
        /* Zen 5's 512-bit rule: the unit-stride layers whose pixel tiles would
         * gather a patch matrix (rows too short to read the stored planes by
         * offsets: 3 x 3 maps under 18 wide) */
        if (wide && unit_stride && pixel_gathers) return 1;
    }
    return (double)sb_tile_computed_cols(pixel_tile, pixel_cols) >
           (pointwise ? WASTE_POINTWISE : WASTE_TAPS) * (double)cols;
}

static void plan_job(const sb_conv_desc *d, const sb_tile *tile, const float *packed,
                     const float *planes, size_t plane_floats, const sb_padded_rows *rows,
                     const ptrdiff_t *tap_off, lanes_job *job, sb_step_plan *plan)
{
    memset(job, 0, sizeof *job);
    job->d = d;
    const sb_gemm_config *gemm = d->isa->gemm;
    const int wide = lanes_wide(gemm, sb_cpu_splits_512());
    job->kernel = d->mode == SB_MODE_EXACT ? (wide ? gemm->lanes_wide_exact : gemm->lanes_exact)
                                           : (wide ? gemm->lanes_wide_fast : gemm->lanes_fast);
    job->max_strips = wide ? SB_LANES_WIDE_STRIPS : SB_LANES_NARROW_STRIPS;
    job->store = gemm->lanes_store;
    job->packed = packed;
    job->cin_g = d->c / d->groups, job->cout_g = d->cout / d->groups;
    job->k = job->cin_g * d->kh * d->kw;
    job->cols = d->out_h * d->out_w;
    job->group_floats = sb_packed_a_floats(tile, job->cout_g, job->k);
    job->strips = sb_ceil_div(job->cout_g, SB_LANES_WIDTH);
    job->blocks = sb_ceil_div(job->strips, job->max_strips);
    job->planes = planes, job->plane_floats = plane_floats, job->tap_off = tap_off;
    job->row_step = d->stride_h * rows->rs;
    if (job->row_step == d->out_w) {   /* rows follow one another: one long row */
        job->map_rows = 1, job->map_cols = job->cols;
    } else {
        job->map_rows = d->out_h, job->map_cols = d->out_w;
    }
    job->row_tiles = sb_ceil_div(job->map_cols, SB_LANES_MAX_ROWS);
    const size_t tiles = job->map_rows * job->row_tiles;
    job->tiles_per_chunk = sb_min_size(tiles, CHUNK_TILES);
    job->parts = sb_ceil_div(tiles, job->tiles_per_chunk);
    const double muladds = (double)d->n * (double)d->groups * (double)job->strips *
                           SB_LANES_WIDTH * (double)job->cols * (double)job->k;
    *plan = sb_plan_step(d->n * d->groups * job->blocks * job->parts, 1,
                         muladds / (double)tile->muladds_per_ns);
}

/* Output position tile i of a map row: [*first, *end), near-equal widths of
 * at most SB_LANES_MAX_ROWS. */
static void tile_span(const lanes_job *job, size_t i, size_t *first, size_t *end)
{
    *first = i * job->map_cols / job->row_tiles;
    *end = (i + 1) * job->map_cols / job->row_tiles;
}

static void lanes_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const lanes_job *job = ctx;
    const sb_conv_desc *d = job->d;
    const size_t block = chunk / job->parts, part = chunk % job->parts;
    const size_t ng = block / job->blocks, cb = block % job->blocks;
    const size_t n = ng / d->groups, g = ng % d->groups;
    /* near-equal blocks: 4 strips run as 2 + 2, not 3 + 1 */
    const size_t strip0 = cb * job->strips / job->blocks;
    const size_t strips = (cb + 1) * job->strips / job->blocks - strip0;
    const size_t ch0 = strip0 * SB_LANES_WIDTH;
    const size_t channels = sb_min_size(strips * SB_LANES_WIDTH, job->cout_g - ch0);
    const size_t cols = job->cols, k = job->k;
    const float *x = job->planes + (n * d->c + g * job->cin_g) * job->plane_floats;
    const float *w = job->packed + g * job->group_floats;
    float *y = d->y + (n * d->cout + g * job->cout_g + ch0) * cols;
    const size_t t0 = part * job->tiles_per_chunk;
    const size_t t1 = sb_min_size(job->map_rows * job->row_tiles, t0 + job->tiles_per_chunk);
    /* the chunk's positions are one run of the output planes */
    size_t first, end, unused;
    tile_span(job, t0 % job->row_tiles, &first, &unused);
    tile_span(job, (t1 - 1) % job->row_tiles, &unused, &end);
    first += t0 / job->row_tiles * job->map_cols;
    end += (t1 - 1) / job->row_tiles * job->map_cols;
    if (d->residual)
        sb_prefetch_rows(d->residual + (y + first - d->y), (ptrdiff_t)cols, channels, end - first);
    /* Where the epilogue runs. A bias and relu alone: in the kernel's
     * registers, before it turns the sums over. Other activations, with
     * at most a bias: on the sums in the kernel's layout (bias by column),
     * then turned over by lanes_store. A BatchNormalization or residual:
     * on the output rows after the kernel's stores. Reading back the
     * masked runs just stored cost 0.85 cycles an output, a third of a
     * stem's time; the first two never do. The same operations on the same
     * values in every case, so the same bits. */
    const int code = (int)((uint64_t)d->activation & 0xffu);
    const int fused_steps = d->affine || d->residual;
    const int in_kernel = !fused_steps && (code == SB_ACT_NONE || code == SB_ACT_RELU);
    const int on_sums = !fused_steps && !in_kernel && job->store;
    float bias[SB_LANES_OUT_LD];   /* the block's channels; -0 (no change) elsewhere */
    for (size_t i = 0; i < SB_LANES_OUT_LD; ++i)
        bias[i] = (in_kernel || on_sums) && d->bias && i < channels
                      ? d->bias[g * job->cout_g + ch0 + i] : -0.0f;
    const bits32 no_floor = {0x7fc00000u};   /* NaN: nothing is <= it */
    const float floor = in_kernel && code == SB_ACT_RELU ? 0.0f : no_floor.f;
    float sums[CHUNK_TILES][SB_LANES_MAX_ROWS * SB_LANES_OUT_LD];
    /* the epilogue on the sums reads every column: a block of fewer strips
     * leaves the last ones to it as zeros, not as whatever the stack held */
    if (on_sums && strips < SB_LANES_MAX_STRIPS) memset(sums, 0, sizeof sums);
    for (size_t kb = 0; kb * SB_KC < k; ++kb) {
        const size_t kc = sb_min_size(k - kb * SB_KC, SB_KC);
        const float *ap = w + kb * SB_KC * job->strips * SB_LANES_WIDTH + strip0 * kc * SB_LANES_WIDTH;
        const int last = (kb + 1) * SB_KC >= k && !on_sums;   /* the kernel stores to y */
        for (size_t t = t0; t < t1; ++t) {
            size_t ox0, ox1;
            tile_span(job, t % job->row_tiles, &ox0, &ox1);
            job->kernel(ox1 - ox0, strips, kc, ap, (ptrdiff_t)(kc * SB_LANES_WIDTH),
                        x + t / job->row_tiles * job->row_step + ox0, job->tap_off + kb * SB_KC,
                        sums[t - t0], kb > 0,
                        last ? y + t / job->row_tiles * job->map_cols + ox0 : NULL,
                        (ptrdiff_t)cols, channels, bias, floor);
        }
    }
    if (in_kernel) return;
    if (on_sums) {
        /* the chunk's sums, tile after tile, are one run of floats (a tile
         * of fewer than SB_LANES_MAX_ROWS positions zero-filled): one
         * epilogue row, its column bias the block's repeated */
        const size_t tile_floats = SB_LANES_MAX_ROWS * SB_LANES_OUT_LD, tiles = t1 - t0;
        float bias_run[CHUNK_TILES * SB_LANES_MAX_ROWS * SB_LANES_OUT_LD];
        for (size_t p = 0; p < tiles * SB_LANES_MAX_ROWS; ++p)
            memcpy(bias_run + p * SB_LANES_OUT_LD, bias, sizeof bias);
        for (size_t t = t0; t < t1; ++t) {
            size_t ox0, ox1;
            tile_span(job, t % job->row_tiles, &ox0, &ox1);
            const size_t used = (ox1 - ox0) * SB_LANES_OUT_LD;
            memset(sums[t - t0] + used, 0, (tile_floats - used) * sizeof(float));
        }
        const sb_epilogue_ops e = {.col_bias = d->bias ? bias_run : NULL,
                                   .activation = d->activation, .fast = d->mode == SB_MODE_FAST};
        d->isa->gemm->epilogue(sums[0], (ptrdiff_t)(tiles * tile_floats), 1, tiles * tile_floats, &e);
        for (size_t t = t0; t < t1; ++t) {
            size_t ox0, ox1;
            tile_span(job, t % job->row_tiles, &ox0, &ox1);
            job->store(ox1 - ox0, strips, sums[t - t0],
                       y + t / job->row_tiles * job->map_cols + ox0, (ptrdiff_t)cols, channels);
        }
        return;
    }
    const size_t channel = g * job->cout_g + ch0;   /* the output channel of row 0 */
    const sb_epilogue_ops e = {
        .row_bias = d->bias ? d->bias + channel : NULL,
        .row_affine = d->affine ? d->affine + 4 * channel : NULL,
        .residual = d->residual ? d->residual + (y + first - d->y) : NULL,
        .activation = d->activation, .fast = d->mode == SB_MODE_FAST};
    d->isa->gemm->epilogue(y + first, (ptrdiff_t)cols, channels, end - first, &e);
}

int sb_conv_lanes_run(const sb_conv_desc *d, const sb_tile *tile, const float *packed,
                      const float *planes, size_t plane_floats, const sb_padded_rows *rows)
{
    const size_t k = d->c / d->groups * d->kh * d->kw;
    size_t bytes;
    if (!sb_mul_ok(k, sizeof(ptrdiff_t), &bytes)) return SB_ERR_NO_MEMORY;
    ptrdiff_t *tap_off = sb_workspace_get(bytes);
    if (!tap_off) return SB_ERR_NO_MEMORY;
    sb_padded_tap_offsets(rows, d->c / d->groups, plane_floats, tap_off);
    lanes_job job;
    sb_step_plan plan;
    plan_job(d, tile, packed, planes, plane_floats, rows, tap_off, &job, &plan);
    sb_run_step(&plan, d->max_threads, lanes_chunk, &job);
    sb_workspace_release(tap_off);
    return SB_OK;
}

void sb_conv_lanes_describe(const sb_conv_desc *d, const sb_tile *tile,
                            const sb_padded_rows *rows, sb_plan_info *info)
{
    lanes_job job;
    sb_step_plan plan;
    plan_job(d, tile, NULL, NULL, 0, rows, NULL, &job, &plan);
    info->route = SB_ROUTE_LANES;
    info->b_source = sb_conv_is_pointwise(d) ? SB_B_IN_PLACE : SB_B_BY_OFFSETS;
    info->mr = SB_LANES_MAX_ROWS, info->nr = (int)(job.max_strips * SB_LANES_WIDTH);
    sb_conv_describe_steps(d, job.cout_g, job.cols, job.k, plan.chunks,
                           sb_step_threads(&plan, d->max_threads), plan.est_ns, info);
}
