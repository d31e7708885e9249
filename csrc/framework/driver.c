/* The driver (driver.h): every product of a call in one parallel run per
 * phase, in waves that bound the workspace. */
#include <string.h>
#include "framework/driver.h"
#include "framework/checked.h"
#include "framework/memory.h"
#include "framework/threads.h"

/* The packed operands of one wave stay within this (a wave has at least one
 * product): 32 MiB holds the gathered patches of four ResNet-50 stems. */
#define WAVE_BYTES ((size_t)32 << 20)

typedef struct {
    const sb_product_run *run;
    sb_product_state *states;     /* the wave's products */
    float *scratch;               /* per thread */
    size_t scratch_floats;
} wave_ctx;

static void prepare_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const wave_ctx *w = ctx;
    size_t per = w->run->plan->prepare_chunks;
    sb_exec_prepare(w->run, &w->states[chunk / per], chunk % per);
}

static void compute_chunk(void *ctx, size_t chunk, int thread_index)
{
    const wave_ctx *w = ctx;
    size_t per = w->run->plan->compute_chunks;
    sb_exec_compute(w->run, &w->states[chunk / per], chunk % per,
                    w->scratch + (size_t)thread_index * w->scratch_floats);
}

typedef struct {
    size_t product_bytes;         /* packed A and B of one product, 64-byte multiples */
    size_t a_bytes;
    size_t wave;                  /* products per wave */
    size_t waves;
} wave_shape;

static int shape_waves(const sb_product_plan *plan, wave_shape *ws)
{
    size_t a_bytes, b_bytes;
    if (!sb_mul_ok(plan->packed_a_floats, sizeof(float), &a_bytes) ||
        !sb_mul_ok(plan->packed_b_floats, sizeof(float), &b_bytes))
        return 0;
    ws->a_bytes = sb_round_up_64(a_bytes);
    b_bytes = sb_round_up_64(b_bytes);
    if ((a_bytes && !ws->a_bytes) || (b_bytes == 0 && plan->packed_b_floats) ||
        !sb_add_ok(ws->a_bytes, b_bytes, &ws->product_bytes))
        return 0;
    ws->wave = ws->product_bytes ? WAVE_BYTES / ws->product_bytes : plan->count;
    if (ws->wave < 1) ws->wave = 1;
    if (ws->wave > plan->count) ws->wave = plan->count;
    ws->waves = sb_ceil_div(plan->count, ws->wave);
    return 1;
}

/* Threads for `products` of the plan's products, per phase: the plan's
 * figure, or at_run the run's (sb_threads_for_run). */
static int phase_threads(const sb_product_run *run, double ns, size_t chunks_per_product,
                         size_t products, int at_run)
{
    double share = (double)products / (double)run->plan->count;
    return (at_run ? sb_threads_for_run : sb_threads_for_work)(run->max_threads, ns * share,
                                                             chunks_per_product * products);
}

int sb_run_products(const sb_product_run *run)
{
    const sb_product_plan *plan = run->plan;
    if (plan->route == SB_ROUTE_EMPTY || plan->count == 0) return SB_OK;
    wave_shape ws;
    if (!shape_waves(plan, &ws)) return SB_ERR_NO_MEMORY;

    for (size_t first = 0; first < plan->count; first += ws.wave) {
        const size_t products = sb_min_size(ws.wave, plan->count - first);
        const int compute_threads = phase_threads(run, plan->compute_ns, plan->compute_chunks,
                                                  products, 1);
        /* One workspace: the products' states, their packed operands, then
         * every thread's scratch. */
        size_t states_bytes, packed_bytes, scratch_bytes, total;
        if (!sb_mul_ok(products, sizeof(sb_product_state), &states_bytes) ||
            !sb_mul_ok(products, ws.product_bytes, &packed_bytes) ||
            !sb_mul3_ok((size_t)compute_threads, plan->scratch_floats, sizeof(float),
                        &scratch_bytes) ||
            !sb_add_ok(sb_round_up_64(states_bytes), packed_bytes, &total) ||
            !sb_add_ok(total, scratch_bytes, &total))
            return SB_ERR_NO_MEMORY;
        unsigned char *workspace = sb_workspace_get(total);
        if (!workspace) return SB_ERR_NO_MEMORY;
        wave_ctx w = {run, (sb_product_state *)(void *)workspace,
                      (float *)(void *)(workspace + sb_round_up_64(states_bytes) + packed_bytes),
                      plan->scratch_floats};
        unsigned char *packed = workspace + sb_round_up_64(states_bytes);
        for (size_t i = 0; i < products; ++i) {
            sb_product_state *state = &w.states[i];
            memset(state, 0, sizeof *state);
            run->operands(run->operands_ctx, first + i, &state->ops);
            unsigned char *mine = packed + i * ws.product_bytes;
            if (plan->pack_a) state->packed_a = (float *)(void *)mine;
            if (plan->b_source == SB_B_PACKED_WHOLE)
                state->packed_b = (float *)(void *)(mine + ws.a_bytes);
        }
        if (plan->prepare_chunks)
            sb_parallel_run(phase_threads(run, plan->prepare_ns, plan->prepare_chunks, products, 1),
                            products * plan->prepare_chunks, prepare_chunk, &w);
        sb_parallel_run(compute_threads, products * plan->compute_chunks, compute_chunk, &w);
        sb_workspace_release(workspace);
    }
    return SB_OK;
}

void sb_describe_products(const sb_product_run *run, int path, sb_plan_info *info)
{
    const sb_product_plan *plan = run->plan;
    memset(info, 0, sizeof *info);
    info->route = plan->route;
    info->b_source = plan->b_source;
    info->isa_path = path;
    info->mr = plan->tile->mr, info->nr = plan->tile->nr;
    info->mc = (int64_t)plan->mc, info->nc = (int64_t)plan->nc;
    info->products = (int64_t)plan->count;
    /* (a swapped plan holds the transposed product's shape) */
    info->m = (int64_t)(plan->swapped ? plan->n : plan->m);
    info->n = (int64_t)(plan->swapped ? plan->m : plan->n);
    info->k = (int64_t)plan->k;
    info->pack_a = plan->pack_a;
    info->a_in_place = plan->direct_a;
    if (plan->route == SB_ROUTE_EMPTY) return;
    info->prepare_chunks = (int64_t)(plan->prepare_chunks * plan->count);
    info->compute_chunks = (int64_t)(plan->compute_chunks * plan->count);
    info->estimated_ns = (int64_t)(plan->prepare_ns + plan->compute_ns);
    wave_shape ws;
    if (!shape_waves(plan, &ws)) return;
    info->waves = (int64_t)ws.waves;
    info->threads = phase_threads(run, plan->compute_ns, plan->compute_chunks, ws.wave, 0);
    info->workspace_bytes = (int64_t)(ws.wave * ws.product_bytes +
                                      (size_t)info->threads * plan->scratch_floats * sizeof(float));
}
