/* Plan, then execute, for the operations that are not products (products
 * have tiling.h): an operation's plan turns its shape into an sb_step_plan,
 * with no thread count and no memory, and sb_run_step runs it.
 *
 * The work is `units` independent pieces, each computed whole by one call of
 * the operation's chunk function (elements, rows, planes, row groups: what
 * the operation's definition computes together), grouped `per_chunk` to a
 * chunk: chunk c holds units [c * per_chunk, min(units, (c + 1) * per_chunk)).
 * The grouping is a function of the shape alone, so every unit is computed
 * the same way whichever thread, and however many threads, run it. The time
 * estimate (one thread, the whole step, from the cost table below) decides
 * only how many threads wake, never a result. */
#ifndef SB_STEP_H
#define SB_STEP_H

#include <stddef.h>
#include <stdint.h>
#include "framework/threads.h"

/* One thread's time per item on a vector path, in ns: one table for every
 * operation family, for the thread count alone. */
#define SB_COST_UNARY 1.0          /* per element: the slowest function (erf) */
#define SB_COST_MOVE 0.3           /* per element copied, or of a cheap binary op */
#define SB_COST_POW 4.0            /* per element of pow */
#define SB_COST_REDUCE 0.5         /* per element read by a sum or a norm */
#define SB_COST_SOFTMAX 3.0        /* per element of softmax, log_softmax, layer_norm */
#define SB_COST_GROUP_NORM 1.5     /* per element of a group or instance norm */
#define SB_COST_POOL_TAP 0.5       /* per window tap of a pooling */
#define SB_COST_RESIZE 2.0         /* per output of a resize */
#define SB_COST_PACK 0.5           /* per element packed (tiling.h's SB_NS_PER_PACKED) */

/* Items per chunk the row-wise operations aim at: large enough that a chunk
 * outweighs its dispatch, small enough that two threads share a 100k-element
 * array. */
#define SB_STEP_CHUNK_ITEMS 16384

typedef struct {
    size_t units;                 /* independent pieces of work */
    size_t per_chunk;             /* units per chunk (>= 1) */
    size_t chunks;                /* ceil(units / per_chunk) */
    double est_ns;                /* one thread, the whole step */
} sb_step_plan;

/* `units` units grouped per_chunk (0 is taken as 1) to a chunk. */
sb_step_plan sb_plan_step(size_t units, size_t per_chunk, double est_ns);

/* Units of unit_items items each per chunk of about chunk_items items: at
 * least one. */
static inline size_t sb_units_per_chunk(size_t unit_items, size_t chunk_items)
{
    return unit_items >= chunk_items || unit_items == 0 ? 1 : chunk_items / unit_items;
}

/* The units of chunk `chunk`: [*first, *end). */
static inline void sb_step_units(const sb_step_plan *plan, size_t chunk, size_t *first,
                                 size_t *end)
{
    *first = chunk * plan->per_chunk;
    *end = plan->units - *first < plan->per_chunk ? plan->units : *first + plan->per_chunk;
}

/* Threads the plan wakes under a call's cap (any positive int64). */
int sb_step_threads(const sb_step_plan *plan, int64_t max_threads);

/* Runs fn(ctx, chunk, thread) for every chunk of the plan (threads.h). */
void sb_run_step(const sb_step_plan *plan, int64_t max_threads, sb_chunk_fn fn, void *ctx);

/* Violations of the plan's invariants over a range of shapes (tiling.c's
 * sb_plan_selfcheck adds them): every unit in exactly one chunk, in order. */
int sb_step_selfcheck(void);

#endif
