/* A graph's values (graph.h): names to value ids (an open-addressing table
 * over the names' FNV-1a hashes), the buffers the graph owns, and freeing
 * it all. The loader, the constants, the rewrites and the ops' load all
 * come here; this file calls none of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/error.h"
#include "graph/graph.h"
#include "framework/memory.h"

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (uint8_t)*s++) * 1099511628211ull;
    return h;
}

static int grow_values(sb_graph *g)
{
    size_t slots = g->n_slots ? g->n_slots * 2 : 256;
    int *table = malloc(slots * sizeof *table);
    sb_value *values = realloc(g->values, slots / 2 * sizeof *values);
    if (!table || !values) {
        free(table);
        if (values) g->values = values;
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory for the model's values");
    }
    g->values = values;
    for (size_t i = 0; i < slots; ++i) table[i] = -1;
    for (int v = 0; v < g->n_values; ++v) {
        size_t at = name_hash(g->values[v].name) & (slots - 1);
        while (table[at] >= 0) at = (at + 1) & (slots - 1);
        table[at] = v;
    }
    free(g->slots);
    g->slots = table;
    g->n_slots = slots;
    return SB_OK;
}

/* The value named `name`: its id, a new one when create, else -1. */
int sb_graph_value(sb_graph *g, const char *name, int create)
{
    if ((size_t)g->n_values * 2 + 2 > g->n_slots) {
        if (!create && g->n_slots) goto look;
        if (grow_values(g)) return -2;
    }
look:
    if (!g->n_slots) return -1;
    size_t at = name_hash(name) & (g->n_slots - 1);
    while (g->slots[at] >= 0) {
        if (strcmp(g->values[g->slots[at]].name, name) == 0) return g->slots[at];
        at = (at + 1) & (g->n_slots - 1);
    }
    if (!create) return -1;
    char *copy = sb_arena_strdup(&g->arena, name, strlen(name));
    if (!copy) return -2;
    int v = g->n_values++;
    memset(&g->values[v], 0, sizeof g->values[v]);
    g->values[v].name = copy;
    g->slots[at] = v;
    return v;
}

int sb_graph_new_value(sb_graph *g, const char *base)
{
    size_t len = strlen(base);
    char *name = malloc(len + 24);
    if (!name) return -2;
    memcpy(name, base, len + 1);
    for (unsigned long k = 1; sb_graph_value(g, name, 0) >= 0; ++k)
        snprintf(name + len, 24, "#%lu", k);
    int v = sb_graph_value(g, name, 1);
    free(name);
    return v;
}

int sb_graph_keep_buffer(sb_graph *g, void *buffer)
{
    if (g->n_buffers == g->cap_buffers) {
        size_t cap = g->cap_buffers ? g->cap_buffers * 2 : 64;
        void **grown = realloc(g->buffers, cap * sizeof *grown);
        if (!grown) return SB_ERR_NO_MEMORY;
        g->buffers = grown;
        g->cap_buffers = cap;
    }
    g->buffers[g->n_buffers++] = buffer;
    return SB_OK;
}

int sb_graph_keep_object(sb_graph *g, void *object, void (*free_fn)(void *))
{
    if (g->n_owned == g->cap_owned) {
        size_t cap = g->cap_owned ? g->cap_owned * 2 : 8;
        void **objects = realloc(g->owned, cap * sizeof *objects);
        if (objects) g->owned = objects;
        void (**fns)(void *) = objects ? realloc(g->owned_free, cap * sizeof *fns) : NULL;
        if (fns) g->owned_free = fns;
        if (!objects || !fns) {
            free_fn(object);
            return SB_ERR_NO_MEMORY;
        }
        g->cap_owned = cap;
    }
    g->owned[g->n_owned] = object;
    g->owned_free[g->n_owned++] = free_fn;
    return SB_OK;
}

void sb_graph_free(sb_graph *g)
{
    if (!g) return;
    for (size_t i = g->n_owned; i-- > 0;) g->owned_free[i](g->owned[i]);
    free(g->owned);
    free(g->owned_free);
    free(g->narrow);
    for (size_t i = 0; i < g->n_buffers; ++i) sb_free_aligned(g->buffers[i]);
    free(g->buffers);
    free(g->values);
    free(g->slots);
    sb_arena_free(g->arena);
    free(g);
}
