/* A convolution whose output map is small (at most SB_FEW_COLUMNS_MAP
 * positions per image: 1x1 squeeze-and-excitation layers, the last frames of
 * a 1-D network) is the packed weights times a few columns. The tile kernel
 * puts output positions in its vector lanes and would compute NR columns to
 * keep a few; the tile's few-column kernel (sb_column_kernel_fn) puts output
 * channels in the lanes instead and loads each weight once for up to
 * SB_COLUMNS_MAX columns, with the tile kernel's per-output order and
 * operations, so the bits are the tile route's.
 *
 * B, the patch matrix (K taps x OH*OW columns), is the input itself for a
 * pointwise layer (1x1 kernel, unit strides, no padding), else gathered once
 * per image and group before the products (K x OH*OW floats, +0 in the
 * padding). A chunk is CHUNK_STRIPS strips of one image and group, a constant
 * of the shape; it computes its outputs column-major into a scratch tile,
 * stores them to the NCHW output and applies the epilogue (bias, activation,
 * canonical NaN) to its rows. */
#include <string.h>
#include "kernels/conv_internal.h"
#include "framework/checked.h"
#include "framework/epilogue.h"
#include "framework/memory.h"
#include "framework/step.h"

#define CHUNK_STRIPS 8
#define WEIGHTS_PER_NS 4.0   /* bound by streaming the weights once per column group */
#define GATHER_NS 0.5        /* per gathered patch element */

typedef struct {
    const sb_conv_desc *d;
    sb_column_kernel_fn kernel;
    const float *packed;
    const float *b;              /* B of image n, group g at b + (n*G + g)*b_floats: */
    size_t b_floats;             /* the gathered patches, or (pointwise) the input */
    ptrdiff_t b_step;            /* from tap p to tap p + 1 */
    size_t mr, cin_g, cout_g, k, cols, strips, group_floats, chunks_per_group;
} few_columns_job;

int sb_few_columns_applies(const sb_conv_desc *d)
{
    return d->out_h * d->out_w <= SB_FEW_COLUMNS_MAP && d->c > 0;
}

/* Column j of B for (n, g), tap p = (c, ky, kx) at dst[p*cols + j]; +0 in
 * the padding. Each element is a select, not a branch or a library call:
 * a tap has only a few columns. */
static void gather_patches(const sb_conv_desc *d, size_t n, size_t g, size_t cin_g,
                           float *dst)
{
    const size_t cols = d->out_h * d->out_w, oh = d->out_h, ow = d->out_w;
    const size_t h = d->h, w = d->w, kh = d->kh, kw = d->kw;
    const size_t sh = d->stride_h, sw = d->stride_w, dh = d->dil_h, dw = d->dil_w;
    const size_t pt = d->pad_top, pl = d->pad_left;
    const float *x = d->x + (n * d->c + g * cin_g) * h * w;
    if (h == 0 || w == 0) {   /* (all padding) */
        for (size_t i = 0; i < cin_g * kh * kw * cols; ++i) dst[i] = 0.0f;
        return;
    }
    for (size_t c = 0; c < cin_g; ++c, x += h * w)
        for (size_t ky = 0; ky < kh; ++ky)
            for (size_t kx = 0; kx < kw; ++kx, dst += cols)
                for (size_t oy = 0; oy < oh; ++oy) {
                    size_t py = oy * sh + ky * dh;   /* padded coordinates */
                    int row_inside = py >= pt && py - pt < h;
                    const float *in = x + (row_inside ? py - pt : 0) * w;
                    for (size_t ox = 0; ox < ow; ++ox) {
                        size_t px = ox * sw + kx * dw;
                        int inside = row_inside && px >= pl && px - pl < w;
                        float v = in[inside ? px - pl : 0];
                        dst[oy * ow + ox] = inside ? v : 0.0f;
                    }
                }
}

static void few_columns_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const few_columns_job *job = ctx;
    const sb_conv_desc *d = job->d;
    const size_t per_image = d->groups * job->chunks_per_group;
    const size_t n = chunk / per_image, g = chunk % per_image / job->chunks_per_group;
    const size_t strip0 = chunk % job->chunks_per_group * CHUNK_STRIPS;
    const size_t row0 = strip0 * job->mr, cols = job->cols;
    const size_t rows = job->cout_g - row0 < CHUNK_STRIPS * job->mr ? job->cout_g - row0
                                                                      : CHUNK_STRIPS * job->mr;
    const float *b = job->b + (n * d->groups + g) * job->b_floats;
    float *y = d->y + (n * d->cout + g * job->cout_g + row0) * cols;
    const float *weights = job->packed + g * job->group_floats;
    /* outputs column by column (element (r, j) at scratch[j*rows + r]); one
     * column is the output itself */
    float scratch[SB_FEW_COLUMNS_MAP * CHUNK_STRIPS * 16];
    float *t = cols == 1 ? y : scratch;
    /* columns in near-equal groups of at most SB_COLUMNS_MAX */
    const size_t col_groups = sb_ceil_div(cols, SB_COLUMNS_MAX);
    for (size_t kb = 0; kb * SB_KC < job->k; ++kb) {
        size_t kc = job->k - kb * SB_KC < SB_KC ? job->k - kb * SB_KC : SB_KC;
        const float *block = weights + kb * SB_KC * job->strips * job->mr + strip0 * kc * job->mr;
        const float *bk = b + (ptrdiff_t)(kb * SB_KC) * job->b_step;
        for (size_t cg = 0, j0 = 0; cg < col_groups; ++cg) {
            size_t width = (cols - j0) / (col_groups - cg);
            job->kernel(job->mr, kc, rows, width, block, bk + j0, job->b_step, t + j0 * rows,
                        (ptrdiff_t)rows, kb > 0);
            j0 += width;
        }
    }
    if (cols > 1)
        for (size_t r = 0; r < rows; ++r)
            for (size_t j = 0; j < cols; ++j) y[r * cols + j] = scratch[j * rows + r];
    const size_t first = g * job->cout_g + row0;   /* the output channel of row 0 */
    const sb_epilogue_ops e = {
        .row_bias = d->bias ? d->bias + first : NULL,
        .row_affine = d->affine ? d->affine + 4 * first : NULL,
        .residual = d->residual ? d->residual + (y - d->y) : NULL,
        .activation = d->activation, .fast = d->mode == SB_MODE_FAST};
    d->isa->gemm->epilogue(y, (ptrdiff_t)cols, rows, cols, &e);   /* at the path's width */
}

static void plan_job(const sb_conv_desc *d, const sb_tile *tile, const float *packed,
                     few_columns_job *job, sb_step_plan *plan)
{
    memset(job, 0, sizeof *job);
    job->d = d;
    job->kernel = d->mode == SB_MODE_EXACT ? d->isa->gemm->column_exact : d->isa->gemm->column_fast;
    job->packed = packed;
    job->mr = (size_t)tile->mr;
    job->cin_g = d->c / d->groups, job->cout_g = d->cout / d->groups;
    job->k = job->cin_g * d->kh * d->kw;
    job->cols = d->out_h * d->out_w;
    job->strips = sb_ceil_div(job->cout_g, job->mr);
    job->group_floats = sb_packed_a_floats(tile, job->cout_g, job->k);
    job->chunks_per_group = sb_ceil_div(job->strips, CHUNK_STRIPS);
    double weights = (double)d->n * (double)d->cout * (double)job->k;
    double gathered = sb_conv_is_pointwise(d) ? 0.0 : (double)d->n * (double)d->groups *
                                              (double)job->k * (double)job->cols;
    *plan = sb_plan_step(d->n * d->groups * job->chunks_per_group, 1,
                         weights * (double)sb_ceil_div(job->cols, SB_COLUMNS_MAX) /
                                 WEIGHTS_PER_NS + gathered * GATHER_NS);
}

int sb_few_columns_run(const sb_conv_desc *d, const sb_tile *tile, const float *packed)
{
    few_columns_job job;
    sb_step_plan plan;
    plan_job(d, tile, packed, &job, &plan);
    float *own = NULL;
    if (sb_conv_is_pointwise(d)) {   /* B is the input: plane p of (n, g) is tap p */
        job.b = d->x, job.b_floats = job.cin_g * job.cols, job.b_step = (ptrdiff_t)job.cols;
    } else {
        size_t floats, bytes;
        if (!sb_mul_ok(job.k, job.cols, &job.b_floats) ||
            !sb_mul3_ok(d->n, d->groups, job.b_floats, &floats) ||
            !sb_mul_ok(floats, sizeof(float), &bytes))
            return SB_ERR_NO_MEMORY;
        if (floats == 0) return SB_OK;   /* no images */
        own = sb_workspace_get(bytes);
        if (!own) return SB_ERR_NO_MEMORY;
        for (size_t n = 0; n < d->n; ++n)
            for (size_t g = 0; g < d->groups; ++g)
                gather_patches(d, n, g, job.cin_g, own + (n * d->groups + g) * job.b_floats);
        job.b = own, job.b_step = (ptrdiff_t)job.cols;
    }
    sb_run_step(&plan, d->max_threads, few_columns_chunk, &job);
    sb_workspace_release(own);
    return SB_OK;
}

void sb_few_columns_describe(const sb_conv_desc *d, const sb_tile *tile, sb_plan_info *info)
{
    few_columns_job job;
    sb_step_plan plan;
    plan_job(d, tile, NULL, &job, &plan);
    info->route = SB_ROUTE_COLUMN;
    info->b_source = sb_conv_is_pointwise(d) ? SB_B_IN_PLACE : SB_B_PACKED_WHOLE;
    info->mr = tile->mr, info->nr = (int64_t)job.cols;
    sb_conv_describe_steps(d, job.cout_g, job.cols, job.k, plan.chunks,
                           sb_step_threads(&plan, d->max_threads), plan.est_ns, info);
}
