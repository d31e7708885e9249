/* The plan cache (plan_cache.h). Plans are made under the lock: two runs
 * that need the same new plan make it once. */
#include <stdlib.h>
#include <string.h>
#include "graph/error.h"
#include "framework/memory.h"
#include "graph/plan_cache.h"

#if (defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)) || defined(_WIN32)
/* no threads there (Pyodide's side module; the Windows build runs on one thread) */
static void *lock_new(void) { static int dummy; return &dummy; }
static void lock_free(void *l) { (void)l; }
static void lock(sb_plan_cache *c) { (void)c; }
static void unlock(sb_plan_cache *c) { (void)c; }
#else
#include <pthread.h>
static void *lock_new(void)
{
    pthread_mutex_t *m = malloc(sizeof *m);
    if (m && pthread_mutex_init(m, NULL) != 0) { free(m); m = NULL; }
    return m;
}
static void lock_free(void *l)
{
    if (!l) return;
    pthread_mutex_destroy(l);
    free(l);
}
static void lock(sb_plan_cache *c) { pthread_mutex_lock(c->lock); }
static void unlock(sb_plan_cache *c) { pthread_mutex_unlock(c->lock); }
#endif

int sb_plan_cache_init(sb_plan_cache *c)
{
    memset(c, 0, sizeof *c);
    c->lock = lock_new();
    return c->lock ? SB_OK : SB_ERR_NO_MEMORY;
}

void sb_plan_cache_free(sb_plan_cache *c)
{
    sb_plan_free(c->plans);
    lock_free(c->lock);
    memset(c, 0, sizeof *c);
}

int sb_plan_cached(sb_session *s, sb_plan **list, const sb_vinfo *key, int count, int start,
                   sb_plan_seed seed, const void *ctx, sb_plan **out)
{
    sb_plan_cache *c = &s->cache;
    lock(c);
    sb_plan *p = *list;
    for (; p; p = p->next)
        if (p->key_count == count && (count == 0 || memcmp(p->key, key, (size_t)count * sizeof *key) == 0))
            break;
    int status = SB_OK;
    if (!p) {
        sb_plan_value *init = calloc((size_t)s->graph->n_values + 1, sizeof *init);
        sb_vinfo *own_key = malloc((size_t)(count + 1) * sizeof *own_key);
        if (!init || !own_key) status = sb_fail(SB_ERR_NO_MEMORY, "out of memory while planning");
        if (!status) {
            seed(ctx, init);
            if (count) memcpy(own_key, key, (size_t)count * sizeof *key);
            status = sb_plan_make(s, start, init, &p);
        }
        if (!status) {
            p->key = own_key, p->key_count = count;
            own_key = NULL;
            p->next = *list;
            *list = p;
        }
        free(init);
        free(own_key);
    }
    unlock(c);
    *out = p;
    return status;
}

int sb_plan_cache_count(sb_session *s)
{
    lock(&s->cache);
    int n = 0;
    for (const sb_plan *p = s->cache.plans; p; p = p->next) ++n;
    unlock(&s->cache);
    return n;
}

void *sb_plan_take_arena(sb_session *s, sb_plan *p)
{
    void *arena = NULL;
    lock(&s->cache);
    if (p->n_free_arenas) arena = p->free_arenas[--p->n_free_arenas];
    unlock(&s->cache);
    return arena ? arena : sb_alloc_aligned((size_t)(p->arena_bytes > 0 ? p->arena_bytes : 64));
}

void sb_plan_give_arena(sb_session *s, sb_plan *p, void *arena)
{
    if (!arena) return;
    lock(&s->cache);
    if (p->n_free_arenas == p->cap_free_arenas) {
        int cap = p->cap_free_arenas ? p->cap_free_arenas * 2 : 4;
        void **grown = realloc(p->free_arenas, (size_t)cap * sizeof *grown);
        if (grown) p->free_arenas = grown, p->cap_free_arenas = cap;
    }
    if (p->n_free_arenas < p->cap_free_arenas) {
        p->free_arenas[p->n_free_arenas++] = arena;
        arena = NULL;
    }
    unlock(&s->cache);
    sb_free_aligned(arena);
}
