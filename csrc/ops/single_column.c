/* A 1x1 convolution over a 1x1 input (the squeeze-and-excitation layers of
 * MobileNet-style networks) is a matrix-vector product: Cout/G x Cin/G packed
 * weights times one input vector per image and group. The tile kernel would
 * compute NR columns to keep one; the tile's single-column kernel computes
 * slivers of 4 (or 2) rows of outputs instead, with the tile kernel's
 * per-output order and operations (sb_column_kernel_fn), so the bits are the
 * tile route's.
 *
 * A chunk is CHUNK_STRIPS strips of one image and group, a constant of the
 * shape; its rows get the epilogue (bias, activation, canonical NaN) as a
 * rows x 1 tile. */
#include "ops/conv_internal.h"
#include "framework/checked.h"
#include "framework/epilogue.h"
#include "framework/step.h"

#define CHUNK_STRIPS 8
#define WEIGHTS_PER_NS 4.0   /* bound by streaming the weights once */

typedef struct {
    const sb_conv_desc *d;
    sb_column_kernel_fn kernel;
    const float *packed;
    size_t mr, cin_g, cout_g, strips, group_floats, chunks_per_group;
} single_column_job;

static void single_column_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const single_column_job *job = ctx;
    const sb_conv_desc *d = job->d;
    const size_t per_image = d->groups * job->chunks_per_group;
    const size_t n = chunk / per_image, g = chunk % per_image / job->chunks_per_group;
    const size_t strip0 = chunk % job->chunks_per_group * CHUNK_STRIPS;
    const size_t row0 = strip0 * job->mr, k = job->cin_g;
    const size_t rows = job->cout_g - row0 < CHUNK_STRIPS * job->mr ? job->cout_g - row0
                                                                      : CHUNK_STRIPS * job->mr;
    const float *x = d->x + n * d->c + g * job->cin_g;   /* 1 x 1 planes: one float each */
    float *y = d->y + n * d->cout + g * job->cout_g + row0;
    const float *weights = job->packed + g * job->group_floats;
    for (size_t kb = 0; kb * SB_KC < k; ++kb) {
        size_t kc = k - kb * SB_KC < SB_KC ? k - kb * SB_KC : SB_KC;
        const float *block = weights + kb * SB_KC * job->strips * job->mr;
        job->kernel(job->mr, kc, rows, block + strip0 * kc * job->mr, x + kb * SB_KC, y, kb > 0);
    }
    sb_epilogue(y, 1, rows, 1, d->bias ? d->bias + g * job->cout_g + row0 : NULL, NULL,
                d->activation);
}

static void plan_job(const sb_conv_desc *d, const sb_tile *tile, const float *packed,
                     single_column_job *job, sb_step_plan *plan)
{
    job->d = d;
    job->kernel = d->mode == SB_MODE_EXACT ? d->isa->gemm->column_exact : d->isa->gemm->column_fast;
    job->packed = packed;
    job->mr = (size_t)tile->mr;
    job->cin_g = d->c / d->groups, job->cout_g = d->cout / d->groups;
    job->strips = sb_ceil_div(job->cout_g, job->mr);
    job->group_floats = sb_packed_a_floats(tile, job->cout_g, job->cin_g);
    job->chunks_per_group = sb_ceil_div(job->strips, CHUNK_STRIPS);
    *plan = sb_plan_step(d->n * d->groups * job->chunks_per_group, 1,
                         (double)d->n * (double)d->cout * (double)job->cin_g / WEIGHTS_PER_NS);
}

void sb_single_column_run(const sb_conv_desc *d, const sb_tile *tile, const float *packed)
{
    single_column_job job;
    sb_step_plan plan;
    plan_job(d, tile, packed, &job, &plan);
    sb_run_step(&plan, d->max_threads, single_column_chunk, &job);
}

void sb_single_column_describe(const sb_conv_desc *d, const sb_tile *tile, sb_plan_info *info)
{
    single_column_job job;
    sb_step_plan plan;
    plan_job(d, tile, NULL, &job, &plan);
    info->route = SB_ROUTE_COLUMN;
    info->b_source = SB_B_IN_PLACE;
    info->mr = tile->mr, info->nr = 1;
    info->products = (int64_t)(d->n * d->groups);
    info->m = (int64_t)job.cout_g, info->n = 1, info->k = (int64_t)job.cin_g;
    info->compute_chunks = (int64_t)plan.chunks;
    info->threads = sb_step_threads(&plan, d->max_threads);
    info->waves = 1;
    info->estimated_ns = (int64_t)plan.est_ns;
}
