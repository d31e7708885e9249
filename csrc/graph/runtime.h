/* A session's plans and how they run (planner.c, plan_cache.c, executor.c,
 * session.c).
 *
 * A plan is made for one set of input infos: it walks the nodes in run
 * order with each value's info (and its data when known while planning),
 * computes at plan time what depends on constants and shapes alone, and
 * turns every other node into a step whose outputs have offsets in one
 * arena (value lifetimes placed best-fit by size, views and in-place steps
 * sharing their input's bytes). A node whose output shapes depend on data
 * that is only there at run time (NonZero, a Reshape of computed values)
 * ends the plan: the run infers it with the data, and continues with a
 * plan made for the shapes it gave (cached per shapes, under the plan). */
#ifndef SB_GRAPH_RUNTIME_H
#define SB_GRAPH_RUNTIME_H

#include "graph/graph.h"

enum sb_plan_where {
    PV_NONE = 0,                 /* not computed by this plan (yet) */
    PV_EXTERNAL,                 /* a graph input, or a value of the plan this one continues */
    PV_CONST,                    /* a graph constant */
    PV_KNOWN,                    /* computed while planning (the plan owns it) */
    PV_ARENA,                    /* at offset in the run's arena */
    PV_ALIAS,                    /* the bytes of value `alias` (a view, or in place) */
};

typedef struct sb_plan_value {
    sb_vinfo info;
    int where;
    int alias;                   /* PV_ALIAS: the root value */
    int64_t alias_offset;        /* PV_ALIAS: where in the root's bytes (a Split's views) */
    int64_t offset;              /* PV_ARENA */
    void *data;                  /* PV_CONST, PV_KNOWN */
    int first, last;             /* PV_ARENA: nodes (run order) that write and last read it */
} sb_plan_value;

typedef struct sb_graph_step {
    int node;                    /* index into the graph's nodes */
    int64_t workspace;           /* its scratch: offset in the arena, bytes */
    int64_t workspace_bytes;
    void *prepared;              /* its op's prepare (owned), or null */
    int views;                   /* its outputs are views of its input: nothing runs */
    int gathers;                 /* its inputs are runs of its output (a Concat's) */
} sb_graph_step;

typedef struct sb_plan sb_plan;
struct sb_plan {
    sb_plan *next;               /* in its cache list */
    int n_steps, max_inputs;
    sb_graph_step *steps;
    sb_plan_value *values;       /* one per graph value */
    int dynamic;                 /* the node that ends the plan (infer at run), or -1 */
    int64_t arena_bytes;
    int key_count;               /* the infos this plan was made for */
    sb_vinfo *key;
    sb_plan *continuations;      /* plans after `dynamic`, per its output infos */
    void **free_arenas;          /* arenas of finished runs, for the next */
    int n_free_arenas, cap_free_arenas;
    void **known;                /* buffers of PV_KNOWN values */
    int n_known;
};

/* The plans of a session (plan_cache.c). */
typedef struct sb_plan_cache {
    sb_plan *plans;              /* per set of input infos */
    void *lock;                  /* guards plans, continuations and free arenas */
} sb_plan_cache;

struct sb_session {
    sb_graph *graph;
    int *last_reader;            /* per value: the last node (run order) reading it; n_nodes
                                  * for a graph output */
    sb_plan_cache cache;
};

/* A session over a loaded graph (a subgraph's, graph/subgraph.c); the
 * graph is the session's, or freed on failure. */
int sb_session_from_graph(sb_graph *g, sb_session **out);

/* A plan from node `start` on, with values as `values` gives them (a copy
 * is made: n_values entries; the caller's infos for PV_EXTERNAL ones). */
int sb_plan_make(sb_session *s, int start, const sb_plan_value *values, sb_plan **out);
void sb_plan_free(sb_plan *p);

/* One run over a plan: ptr[v] for every PV_EXTERNAL value set; the plan's
 * own filled in. At the end of the last plan of the graph, `finish` is
 * called with the whole table (the arenas still live). */
typedef struct sb_run_state {
    sb_session *session;
    void **ptr;                  /* per value: its bytes */
    sb_vinfo *infos;             /* per value: its info (as the plans say) */
    int threads;                 /* this run's thread cap */
    int64_t *profile_ns, *profile_calls;   /* per label, or null */
    int64_t *node_ns, *node_calls;         /* per node, or null */
    void **heap;                 /* dynamic nodes' outputs, freed after the run */
    int n_heap, cap_heap;
    int (*finish)(struct sb_run_state *state);
    void *finish_ctx;
} sb_run_state;
int sb_plan_run(sb_plan *p, sb_run_state *state);

#endif
