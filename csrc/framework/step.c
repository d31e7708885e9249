/* The step plan of the operations that are not products (step.h). */
#include "framework/step.h"

sb_step_plan sb_plan_step(size_t units, size_t per_chunk, double est_ns)
{
    sb_step_plan plan = {.units = units, .per_chunk = per_chunk ? per_chunk : 1, .est_ns = est_ns};
    plan.chunks = units / plan.per_chunk + (units % plan.per_chunk != 0);
    return plan;
}

int sb_step_threads(const sb_step_plan *plan, int64_t max_threads)
{
    return sb_threads_for_work(sb_thread_cap(max_threads < 1 ? 1 : max_threads), plan->est_ns,
                               plan->chunks);
}

void sb_run_step(const sb_step_plan *plan, int64_t max_threads, sb_chunk_fn fn, void *ctx)
{
    if (plan->chunks)
        sb_parallel_run(sb_threads_for_run(sb_thread_cap(max_threads < 1 ? 1 : max_threads),
                                           plan->est_ns, plan->chunks),
                        plan->chunks, fn, ctx);
}

int sb_step_selfcheck(void)
{
    int bad = 0;
    const size_t sizes[] = {0, 1, 2, 3, 7, 16, 17, 255, 256, 16383, 16384, 16385, 100000};
    const size_t n = sizeof sizes / sizeof sizes[0];
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j) {
            sb_step_plan plan = sb_plan_step(sizes[i], sizes[j], 1.0);
            size_t next = 0;
            for (size_t c = 0; c < plan.chunks; ++c) {
                size_t first, end;
                sb_step_units(&plan, c, &first, &end);
                bad += first != next || end <= first || end - first > plan.per_chunk;
                next = end;
            }
            bad += next != plan.units;
            bad += sb_units_per_chunk(sizes[i], SB_STEP_CHUNK_ITEMS) < 1;
        }
    return bad;
}
