/* Running a plan (runtime.h): every step in C over one arena, then either
 * the graph's end or the node whose shapes needed data, inferred now, and
 * the plan that continues after it. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "graph/error.h"
#include "framework/memory.h"
#include "graph/node_eval.h"
#include "graph/plan_cache.h"

#if defined(SB_SIDE_MODULE)
/* Pyodide's side module borrows the C library of Pyodide's own emscripten,
 * whose struct timespec need not be the one this compiler lays out: no
 * clock is read there, and the profile counts node runs only. */
static double now_ns(void) { return 0.0; }
#else
static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}
#endif

/* A continuation starts from its plan's values: what the plan computed or
 * was given is external to it, and so are the dynamic node's outputs. */
typedef struct {
    const sb_graph *graph;
    const sb_plan *plan;
    const sb_node *node;
    const sb_vinfo *infos;       /* the node's output infos */
} continuation_seed_ctx;

static void continuation_seed(const void *ctx, sb_plan_value *init)
{
    const continuation_seed_ctx *c = ctx;
    const sb_plan *p = c->plan;
    for (int v = 0; v < c->graph->n_values; ++v) {
        init[v] = p->values[v];
        int w = init[v].where;
        if (w == PV_ARENA || w == PV_ALIAS || w == PV_EXTERNAL) {
            memset(&init[v], 0, sizeof init[v]);
            init[v].info = p->values[v].info;
            init[v].where = PV_EXTERNAL;
        }
    }
    for (int j = 0; j < c->node->n_out; ++j) {
        int v = c->node->out[j];
        if (v < 0) continue;
        memset(&init[v], 0, sizeof init[0]);
        init[v].info = c->infos[j];
        init[v].where = PV_EXTERNAL;
    }
}

static int keep_heap(sb_run_state *st, void *p)
{
    if (st->n_heap == st->cap_heap) {
        int cap = st->cap_heap ? st->cap_heap * 2 : 8;
        void **grown = realloc(st->heap, (size_t)cap * sizeof *grown);
        if (!grown) return SB_ERR_NO_MEMORY;
        st->heap = grown, st->cap_heap = cap;
    }
    st->heap[st->n_heap++] = p;
    return SB_OK;
}

/* Zeroed bytes freed with the run's other heap buffers (null: no memory). */
static void *heap_zeroed(sb_run_state *st, size_t bytes)
{
    void *p = sb_alloc_aligned(bytes);
    if (!p || keep_heap(st, p)) {
        sb_free_aligned(p);
        return NULL;
    }
    memset(p, 0, bytes);
    return p;
}

/* The node's inputs and outputs as tensors over this run's table. */
static void bind(const sb_node *n, sb_run_state *st, sb_tval *tin, const sb_tval **in,
                 sb_tval *tout, sb_tval **out)
{
    for (int i = 0; i < n->n_in; ++i) {
        int v = n->in[i];
        if (v < 0 || n->consumed[i]) { in[i] = NULL; continue; }
        tin[i].info = st->infos[v];
        tin[i].data = st->ptr[v];
        in[i] = &tin[i];
    }
    for (int j = 0; j < n->n_out; ++j) {
        int v = n->out[j];
        if (v < 0) { out[j] = NULL; continue; }
        tout[j].info = st->infos[v];
        tout[j].data = st->ptr[v];
        out[j] = &tout[j];
    }
}

/* (a run given calls without nanoseconds still reads the clock: it is cheap) */
static int counting(const sb_run_state *st) { return st->profile_calls || st->node_calls; }

/* A node's call and nanoseconds added to the counters the run was given:
 * per label and per node. */
static void count_call(sb_run_state *st, const sb_node *n, int64_t ns)
{
    if (st->profile_calls) {
        if (st->profile_ns) st->profile_ns[n->label] += ns;
        st->profile_calls[n->label] += 1;
    }
    if (st->node_calls) {
        ptrdiff_t k = n - st->session->graph->nodes;
        if (st->node_ns) st->node_ns[k] += ns;
        st->node_calls[k] += 1;
    }
}

/* One node's op->run, its time and call added to the profile when asked. */
static int run_node(sb_run_state *st, const sb_node *n, const sb_tval **in, sb_tval **out,
                    void *workspace, const void *prepared)
{
    const sb_graph *g = st->session->graph;
    if (!counting(st)) return sb_node_run(g, n, st->threads, prepared, in, out, workspace, 0);
    double t0 = now_ns();
    int status = sb_node_run(g, n, st->threads, prepared, in, out, workspace, 0);
    count_call(st, n, (int64_t)(now_ns() - t0));
    return status;
}

/* keep_heap as sb_eval_ctx.keep: the buffer freed now when it cannot be kept. */
static int keep_heap_buffer(void *run, void *buffer)
{
    if (keep_heap(run, buffer)) {
        sb_free_aligned(buffer);
        return SB_ERR_NO_MEMORY;
    }
    return SB_OK;
}

/* The plan after the dynamic node, for the output infos it gave, run. */
static int continue_after(sb_plan *p, sb_run_state *st, const sb_vinfo *infos)
{
    sb_session *s = st->session;
    const sb_node *n = &s->graph->nodes[p->dynamic];
    continuation_seed_ctx seed = {s->graph, p, n, infos};
    sb_plan *next = NULL;
    int status = sb_plan_cached(s, &p->continuations, infos, n->n_out, p->dynamic + 1,
                                continuation_seed, &seed, &next);
    if (status) return status;
    return sb_plan_run(next, st);
}

/* The dynamic node: inferred with its inputs' data, outputs on the heap,
 * run; then the plan for the shapes it gave. */
static int run_dynamic(sb_plan *p, sb_run_state *st, const sb_tval **in, sb_tval *tin)
{
    sb_session *s = st->session;
    sb_graph *g = s->graph;
    const sb_node *n = &g->nodes[p->dynamic];
    size_t slots = (size_t)(n->n_out > 1 ? n->n_out : 1);
    sb_tval *tout = heap_zeroed(st, slots * sizeof *tout);
    sb_tval **out = heap_zeroed(st, slots * sizeof *out);
    sb_vinfo *infos = heap_zeroed(st, slots * sizeof *infos);
    if (!tout || !out || !infos) return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    int status;
    bind(n, st, tin, in, tout, out);
    if (n->op->eval) {   /* outputs that exist only once it has run: a subgraph's */
        double t0 = counting(st) ? now_ns() : 0.0;
        if ((status = sb_node_eval(g, n, st->threads, in, tout, keep_heap_buffer, st))) return status;
        if (counting(st)) count_call(st, n, (int64_t)(now_ns() - t0));
        for (int j = 0; j < n->n_out; ++j) {
            if (n->out[j] < 0) continue;
            infos[j] = tout[j].info;
            st->infos[n->out[j]] = tout[j].info;
            st->ptr[n->out[j]] = tout[j].data;
        }
        return continue_after(p, st, infos);
    }
    sb_node_needs I;
    status = sb_node_infer(g, n, in, infos, &I);
    if (status == SB_NEEDS_VALUES) {
        char where[512];
        sb_node_where(n, where, sizeof where);
        return sb_fail(SB_ERR_VALUE, "%s: the output shapes cannot be inferred", where);
    }
    if (status) return status;
    void *workspace = NULL;
    if (I.workspace > 0) {
        if (!(workspace = sb_alloc_aligned((size_t)I.workspace)) || keep_heap(st, workspace)) {
            sb_free_aligned(workspace);
            return sb_fail(SB_ERR_NO_MEMORY, "out of memory for a node's scratch");
        }
    }
    for (int j = 0; j < n->n_out; ++j) {
        int v = n->out[j];
        if (v < 0) continue;
        int64_t bytes = sb_vinfo_bytes(&infos[j]);
        if (bytes < 0) return sb_fail(SB_ERR_VALUE, "node %d (%s): output %d is too large", n->index,
                                      n->op_type, j);
        st->infos[v] = infos[j];
        if (j == 0 && (n->op->flags & SB_OP_VIEW)) {
            st->ptr[v] = in[0]->data;
        } else {
            void *data = sb_alloc_aligned((size_t)(bytes > 0 ? bytes : 1));
            if (!data || keep_heap(st, data)) {
                sb_free_aligned(data);
                return sb_fail(SB_ERR_NO_MEMORY, "out of memory for %lld bytes", (long long)bytes);
            }
            st->ptr[v] = data;
        }
        tout[j].info = infos[j];
        tout[j].data = st->ptr[v];
    }
    if (!(n->op->flags & SB_OP_VIEW) && (status = run_node(st, n, in, out, workspace, NULL))) return status;
    return continue_after(p, st, infos);
}

int sb_plan_run(sb_plan *p, sb_run_state *st)
{
    sb_session *s = st->session;
    sb_graph *g = s->graph;
    void *arena = sb_plan_take_arena(s, p);
    if (!arena) return sb_fail(SB_ERR_NO_MEMORY, "out of memory for the run's %lld-byte arena",
                               (long long)p->arena_bytes);
    uint8_t *base = arena;
    for (int v = 0; v < g->n_values; ++v) {
        const sb_plan_value *pv = &p->values[v];
        switch (pv->where) {
        case PV_CONST: case PV_KNOWN: st->ptr[v] = pv->data; st->infos[v] = pv->info; break;
        case PV_ARENA: st->ptr[v] = base + pv->offset; st->infos[v] = pv->info; break;
        case PV_ALIAS: case PV_EXTERNAL: st->infos[v] = pv->info; break;
        default: break;
        }
    }
    for (int v = 0; v < g->n_values; ++v)
        if (p->values[v].where == PV_ALIAS)
            st->ptr[v] = (uint8_t *)st->ptr[p->values[v].alias] + p->values[v].alias_offset;
    int status = SB_OK;
    int max_out = 1;
    for (int i = 0; i < p->n_steps; ++i)
        if (g->nodes[p->steps[i].node].n_out > max_out) max_out = g->nodes[p->steps[i].node].n_out;
    sb_tval tin_small[16], tout_small[16], *out_small[16];
    const sb_tval *in_small[16];
    sb_tval *tin = p->max_inputs <= 16 ? tin_small : malloc((size_t)p->max_inputs * sizeof *tin);
    const sb_tval **in = p->max_inputs <= 16 ? in_small : malloc((size_t)p->max_inputs * sizeof *in);
    sb_tval *tout = max_out <= 16 ? tout_small : malloc((size_t)max_out * sizeof *tout);
    sb_tval **out = max_out <= 16 ? out_small : malloc((size_t)max_out * sizeof *out);
    if (!tin || !in || !tout || !out) status = sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    for (int i = 0; i < p->n_steps && !status; ++i) {
        const sb_graph_step *stp = &p->steps[i];
        const sb_node *n = &g->nodes[stp->node];
        if ((n->op->flags & SB_OP_VIEW) || stp->views) {   /* its outputs share its input's bytes */
            count_call(st, n, 0);
            continue;
        }
        bind(n, st, tin, in, tout, out);
        status = run_node(st, n, in, out, stp->workspace_bytes > 0 ? base + stp->workspace : NULL,
                          stp->prepared);
    }
    if (!status) status = p->dynamic >= 0 ? run_dynamic(p, st, in, tin) : st->finish(st);
    if (tin != tin_small) free(tin);
    if (in != in_small) free(in);
    if (tout != tout_small) free(tout);
    if (out != out_small) free(out);
    sb_plan_give_arena(s, p, arena);
    return status;
}
