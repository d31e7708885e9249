/* The outer-scope names a node's subgraphs read (scope.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "graph/error.h"
#include "graph/scope.h"
#include "samebits.h"

/* A set of names (open addressing over FNV-1a; the names are not copied). */
typedef struct {
    const char **slot;
    size_t cap, count;
} name_set;

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (uint8_t)*s++) * 1099511628211ull;
    return h;
}

/* 1 when added, 0 when already there, -1 when out of memory. */
static int set_add(name_set *s, const char *name)
{
    if ((s->count + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        const char **grown = calloc(cap, sizeof *grown);
        if (!grown) return -1;
        for (size_t i = 0; i < s->cap; ++i) {
            if (!s->slot[i]) continue;
            size_t at = hash(s->slot[i]) & (cap - 1);
            while (grown[at]) at = (at + 1) & (cap - 1);
            grown[at] = s->slot[i];
        }
        free(s->slot);
        s->slot = grown, s->cap = cap;
    }
    size_t at = hash(name) & (s->cap - 1);
    while (s->slot[at]) {
        if (strcmp(s->slot[at], name) == 0) return 0;
        at = (at + 1) & (s->cap - 1);
    }
    s->slot[at] = name;
    s->count++;
    return 1;
}

static int set_has(const name_set *s, const char *name)
{
    if (!s->cap) return 0;
    size_t at = hash(name) & (s->cap - 1);
    while (s->slot[at]) {
        if (strcmp(s->slot[at], name) == 0) return 1;
        at = (at + 1) & (s->cap - 1);
    }
    return 0;
}

typedef struct {
    const char **names;          /* in order of first use */
    int count, cap;
    name_set seen;
} name_list;

static int list_add(name_list *l, const char *name)
{
    int added = set_add(&l->seen, name);
    if (added <= 0) return added < 0 ? SB_ERR_NO_MEMORY : SB_OK;
    if (l->count == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        const char **grown = realloc(l->names, (size_t)cap * sizeof *grown);
        if (!grown) return SB_ERR_NO_MEMORY;
        l->names = grown, l->cap = cap;
    }
    l->names[l->count++] = name;
    return SB_OK;
}

static int graph_free_names(const sb_onnx_graph *g, int depth, name_list *out);

/* The names node p's subgraphs read from outside them, added to out. */
static int node_free_names(const sb_onnx_node *p, int depth, name_list *out)
{
    if (depth > SB_ONNX_MAX_DEPTH) return sb_fail(SB_ERR_UNSUPPORTED, "subgraphs nest too deep");
    for (size_t a = 0; a < p->attr_count; ++a) {
        const sb_onnx_attr *attr = &p->attrs[a];
        int status = SB_OK;
        if (attr->type == SB_A_GRAPH && attr->g) status = graph_free_names(attr->g, depth + 1, out);
        for (size_t k = 0; !status && attr->type == SB_A_GRAPHS && k < attr->graphs_count; ++k)
            status = graph_free_names(attr->graphs[k], depth + 1, out);
        if (status) return status;
    }
    return SB_OK;
}

/* What g reads that neither it nor its nodes define (its own subgraphs' free
 * names included). */
static int graph_free_names(const sb_onnx_graph *g, int depth, name_list *out)
{
    name_set defined = {0};
    name_list inner = {0};
    int status = SB_OK;
    for (size_t i = 0; i < g->input_count && !status; ++i)
        if (set_add(&defined, g->inputs[i].name) < 0) status = SB_ERR_NO_MEMORY;
    for (size_t i = 0; i < g->initializer_count && !status; ++i)
        if (set_add(&defined, g->initializers[i].name) < 0) status = SB_ERR_NO_MEMORY;
    for (size_t k = 0; k < g->node_count && !status; ++k)
        for (size_t j = 0; j < g->nodes[k].output_count && !status; ++j)
            if (g->nodes[k].outputs[j][0] && set_add(&defined, g->nodes[k].outputs[j]) < 0)
                status = SB_ERR_NO_MEMORY;
    for (size_t k = 0; k < g->node_count && !status; ++k) {
        const sb_onnx_node *p = &g->nodes[k];
        for (size_t i = 0; i < p->input_count && !status; ++i)
            if (p->inputs[i][0]) status = list_add(&inner, p->inputs[i]);
        if (!status) status = node_free_names(p, depth, &inner);
    }
    for (size_t i = 0; i < g->output_count && !status; ++i)
        status = list_add(&inner, g->outputs[i].name);
    for (int i = 0; i < inner.count && !status; ++i)
        if (!set_has(&defined, inner.names[i])) status = list_add(out, inner.names[i]);
    free(defined.slot);
    free(inner.seen.slot);
    free(inner.names);
    if (status == SB_ERR_NO_MEMORY) return sb_fail(status, "out of memory");
    return status;
}

int sb_scope_free_names(const sb_onnx_node *p, const char ***names, int *count)
{
    name_list out = {0};
    int status = node_free_names(p, 0, &out);
    free(out.seen.slot);
    if (status) {
        free(out.names);
        return status == SB_ERR_NO_MEMORY ? sb_fail(status, "out of memory") : status;
    }
    *names = out.names, *count = out.count;
    return SB_OK;
}

int sb_scope_has_subgraphs(const sb_onnx_node *p)
{
    for (size_t a = 0; a < p->attr_count; ++a)
        if (p->attrs[a].type == SB_A_GRAPH || p->attrs[a].type == SB_A_GRAPHS) return 1;
    return 0;
}
