/* A session's plans, found by the infos they were made for, and the arenas
 * of finished runs kept for the next: one cache with its own lock, which
 * the session (root plans, per set of input infos) and the executor (the
 * plans that continue after a data-dependent node, per its output infos)
 * both go through. */
#ifndef SB_GRAPH_PLAN_CACHE_H
#define SB_GRAPH_PLAN_CACHE_H

#include "graph/runtime.h"

/* 0, or SB_ERR_NO_MEMORY. */
int sb_plan_cache_init(sb_plan_cache *c);
/* Frees every plan and the lock. */
void sb_plan_cache_free(sb_plan_cache *c);

/* Fills the values a new plan starts from (n_values entries, zeroed). */
typedef void (*sb_plan_seed)(const void *ctx, sb_plan_value *values);

/* The plan in *list made for `key` (count infos), or one made now from node
 * `start` on, with values as seed gives them, and added to *list. */
int sb_plan_cached(sb_session *s, sb_plan **list, const sb_vinfo *key, int count, int start,
                   sb_plan_seed seed, const void *ctx, sb_plan **out);
/* How many plans the session's root list holds. */
int sb_plan_cache_count(sb_session *s);

/* An arena for one run of p: a finished run's, or a new one (null when out
 * of memory); given back after the run for the next. */
void *sb_plan_take_arena(sb_session *s, sb_plan *p);
void sb_plan_give_arena(sb_session *s, sb_plan *p, void *arena);

#endif
