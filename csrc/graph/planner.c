/* Plans (runtime.h): the steps for one set of input infos and the arena
 * they run in. Pure bookkeeping except for the nodes computed while
 * planning, which run the same op code a step would (the same bits). */
#include <stdlib.h>
#include <string.h>
#include "graph/error.h"
#include "framework/memory.h"
#include "graph/node_eval.h"
#include "graph/runtime.h"

/* Outputs of nodes whose inputs are all known are computed while planning
 * when they are at most this large (shape arithmetic, masks from shapes);
 * larger ones run as steps. */
#define KNOWN_LIMIT ((int64_t)1 << 20)
#define ALIGN 64

static int root_of(const sb_plan_value *values, int v)
{
    return values[v].where == PV_ALIAS ? values[v].alias : v;
}

static int64_t round_up(int64_t bytes) { return (bytes + ALIGN - 1) / ALIGN * ALIGN; }

void sb_plan_free(sb_plan *p)
{
    while (p) {
        sb_plan *next = p->next;
        sb_plan_free(p->continuations);
        for (int i = 0; i < p->n_known; ++i) sb_free_aligned(p->known[i]);
        for (int i = 0; i < p->n_free_arenas; ++i) sb_free_aligned(p->free_arenas[i]);
        free(p->known);
        free(p->free_arenas);
        for (int i = 0; p->steps && i < p->n_steps; ++i) sb_free_aligned(p->steps[i].prepared);
        free(p->steps);
        free(p->values);
        free(p->key);
        free(p);
        p = next;
    }
}

static void *keep_known(sb_plan *p, int64_t bytes)
{
    void **grown = realloc(p->known, (size_t)(p->n_known + 1) * sizeof *grown);
    if (!grown) return NULL;
    p->known = grown;
    void *data = sb_alloc_aligned((size_t)(bytes > 0 ? bytes : 1));
    if (data) p->known[p->n_known++] = data;
    return data;
}

/* ---- the arena: best fit by size ------------------------------------------ */

typedef struct {
    int64_t bytes, offset;
    int first, last;
    int64_t *result;             /* where the offset goes */
} block;

static int by_size(const void *a, const void *b)
{
    const block *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return x->first - y->first;   /* a fixed order among equals: the same plan every time */
}

static int by_offset(const void *a, const void *b)
{
    const block *x = *(const block *const *)a, *y = *(const block *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Places every block at the offset of the smallest gap (among blocks whose
 * lifetimes overlap its own) that holds it; returns the arena's size. */
static int64_t place(block *blocks, int n)
{
    qsort(blocks, (size_t)n, sizeof *blocks, by_size);
    block **live = malloc((size_t)(n + 1) * sizeof *live);
    int64_t total = 0;
    if (!live) return -1;
    for (int i = 0; i < n; ++i) {
        int m = 0;
        for (int j = 0; j < i; ++j)
            if (blocks[j].first <= blocks[i].last && blocks[i].first <= blocks[j].last)
                live[m++] = &blocks[j];
        qsort(live, (size_t)m, sizeof *live, by_offset);
        int64_t best = -1, best_gap = -1, at = 0;
        for (int j = 0; j < m; ++j) {
            int64_t gap = live[j]->offset - at;
            if (gap >= blocks[i].bytes && (best_gap < 0 || gap < best_gap)) best = at, best_gap = gap;
            int64_t end = live[j]->offset + live[j]->bytes;
            if (end > at) at = end;
        }
        blocks[i].offset = best >= 0 ? best : at;
        if (blocks[i].offset + blocks[i].bytes > total) total = blocks[i].offset + blocks[i].bytes;
    }
    free(live);
    for (int i = 0; i < n; ++i) *blocks[i].result = blocks[i].offset;
    return total;
}

static int assign_arena(sb_plan *p, int n_values)
{
    int n = 0;
    block *blocks = malloc((size_t)(n_values + p->n_steps + 1) * sizeof *blocks);
    if (!blocks) return sb_fail(SB_ERR_NO_MEMORY, "out of memory while planning");
    for (int v = 0; v < n_values; ++v) {
        sb_plan_value *pv = &p->values[v];
        if (pv->where != PV_ARENA) continue;
        int64_t bytes = sb_vinfo_bytes(&pv->info);
        blocks[n].bytes = round_up(bytes > 0 ? bytes : 1);
        blocks[n].first = pv->first, blocks[n].last = pv->last;
        blocks[n++].result = &pv->offset;
    }
    for (int i = 0; i < p->n_steps; ++i) {
        sb_graph_step *st = &p->steps[i];
        if (st->workspace_bytes <= 0) continue;
        blocks[n].bytes = round_up(st->workspace_bytes);
        blocks[n].first = blocks[n].last = st->node;
        blocks[n++].result = &st->workspace;
    }
    p->arena_bytes = place(blocks, n);
    free(blocks);
    return p->arena_bytes < 0 ? sb_fail(SB_ERR_NO_MEMORY, "out of memory while planning") : SB_OK;
}

/* ---- inputs written where a Concat puts them ------------------------------ */

/* Where each input of gathering node n starts in its output (bytes), in
 * at[0 .. n_in): -1 where it is absent or of another type (the run
 * converts those). */
static void gathered_at(const sb_plan *p, const sb_node *n, int64_t *at)
{
    const sb_vinfo *y = &p->values[n->out[0]].info;
    int64_t next = 0, size = sb_dtype_size(y->dtype);
    for (int i = 0; i < n->n_in; ++i) {
        int v = n->in[i];
        at[i] = -1;
        if (v < 0 || n->consumed[i]) continue;
        if (p->values[v].info.dtype == y->dtype) at[i] = next;
        next += sb_vinfo_numel(&p->values[v].info) * size;
    }
}

/* Whether root r can live at byte `place` of node n's output (its inputs
 * starting at at[]): every input whose run meets [place, place + bytes of
 * r) is r's own bytes at that place (r itself or a view of it), so that the
 * run's copies never write over r. */
static int fits_in_gather(const sb_plan *p, const sb_node *n, const int64_t *at, int r,
                          int64_t place)
{
    const int64_t end = place + sb_vinfo_bytes(&p->values[r].info);
    for (int i = 0; i < n->n_in; ++i) {
        int v = n->in[i];
        if (v < 0 || n->consumed[i]) continue;
        int64_t bytes = sb_vinfo_bytes(&p->values[v].info);
        if (at[i] < 0) {   /* a converted input: its run is numel * the output's size */
            if (bytes > 0) return 0;
            continue;
        }
        if (bytes <= 0 || at[i] + bytes <= place || at[i] >= end) continue;
        const sb_plan_value *pv = &p->values[v];
        int64_t offset = pv->where == PV_ALIAS ? pv->alias_offset : 0;
        if (root_of(p->values, v) != r || at[i] - offset != place) return 0;
    }
    return 1;
}

/* A Concat along an axis with only 1s before it copies each input into a
 * run of its output. Where an input's root (the value whose bytes it is)
 * is written in this plan and read by no node after the Concat, the root
 * is placed in that run instead (an alias of the output at its offset,
 * with every view of it): its producer writes it there, and the Concat
 * finds it in place. The output's bytes then live from the first such
 * producer on. Concats run in order, so a Concat placed in a later one
 * moves with its placed inputs. Placing is only a saving: without memory
 * for the offsets, nothing is placed. */
static void place_gathered_inputs(const sb_graph *g, sb_plan *p)
{
    for (int s = 0; s < p->n_steps; ++s) {
        const sb_graph_step *st = &p->steps[s];
        if (!st->gathers) continue;
        const sb_node *n = &g->nodes[st->node];
        const int c = n->out[0];
        if (c < 0 || p->values[c].where != PV_ARENA || n->n_in < 1) continue;
        int64_t *at = malloc((size_t)n->n_in * sizeof *at);
        if (!at) continue;
        gathered_at(p, n, at);
        for (int j = 0; j < n->n_in; ++j) {
            int u = n->in[j];
            if (u < 0 || n->consumed[j]) continue;
            int r = root_of(p->values, u);
            sb_plan_value *pr = &p->values[r];
            if (at[j] < 0 || r == c || pr->where != PV_ARENA || pr->last > st->node ||
                sb_vinfo_bytes(&p->values[u].info) <= 0)
                continue;
            const int64_t place =
                at[j] - (p->values[u].where == PV_ALIAS ? p->values[u].alias_offset : 0);
            if (place < 0 ||
                place + sb_vinfo_bytes(&pr->info) > sb_vinfo_bytes(&p->values[c].info) ||
                !fits_in_gather(p, n, at, r, place))
                continue;
            for (int v = 0; v < g->n_values; ++v)
                if (p->values[v].where == PV_ALIAS && p->values[v].alias == r)
                    p->values[v].alias = c, p->values[v].alias_offset += place;
            pr->where = PV_ALIAS, pr->alias = c, pr->alias_offset = place;
            if (pr->first < p->values[c].first) p->values[c].first = pr->first;
        }
        free(at);
    }
}

/* ---- the walk over the nodes ---------------------------------------------- */

/* Computes node n now (its inputs known): outputs become PV_KNOWN. */
static int compute_now(sb_session *s, sb_plan *p, const sb_node *n, const sb_tval *const *in,
                       const sb_vinfo *infos, int64_t workspace_bytes)
{
    sb_tval outs_small[16], *outp_small[16];
    sb_tval *outs = n->n_out <= 16 ? outs_small : malloc((size_t)n->n_out * sizeof *outs);
    sb_tval **outp = n->n_out <= 16 ? outp_small : malloc((size_t)n->n_out * sizeof *outp);
    int status = SB_OK;
    void *workspace = NULL;
    if (!outs || !outp) {
        status = sb_fail(SB_ERR_NO_MEMORY, "out of memory while planning");
        goto done;
    }
    for (int j = 0; j < n->n_out; ++j) {
        outp[j] = NULL;
        if (n->out[j] < 0) continue;
        outs[j].info = infos[j];
        outs[j].data = keep_known(p, sb_vinfo_bytes(&infos[j]));
        if (!outs[j].data) {
            status = sb_fail(SB_ERR_NO_MEMORY, "out of memory while planning");
            goto done;
        }
        outp[j] = &outs[j];
    }
    if (!(n->op->flags & SB_OP_VIEW) && workspace_bytes > 0 &&
        !(workspace = sb_alloc_aligned((size_t)workspace_bytes))) {
        status = sb_fail(SB_ERR_NO_MEMORY, "out of memory while planning");
        goto done;
    }
    status = sb_node_run(s->graph, n, s->graph->threads, NULL, in, outp, workspace, 1);
    sb_free_aligned(workspace);
    for (int j = 0; !status && j < n->n_out; ++j) {
        if (n->out[j] < 0) continue;
        sb_plan_value *pv = &p->values[n->out[j]];
        pv->info = infos[j];
        pv->where = PV_KNOWN;
        pv->data = outs[j].data;
    }
done:
    if (outs != outs_small) free(outs);
    if (outp != outp_small) free(outp);
    return status;
}

int sb_plan_make(sb_session *s, int start, const sb_plan_value *init, sb_plan **out)
{
    sb_graph *g = s->graph;
    *out = NULL;
    sb_plan *p = calloc(1, sizeof *p);
    if (!p) return sb_fail(SB_ERR_NO_MEMORY, "out of memory while planning");
    p->dynamic = -1;
    p->values = malloc((size_t)(g->n_values + 1) * sizeof *p->values);
    p->steps = malloc((size_t)(g->n_nodes - start + 1) * sizeof *p->steps);
    const sb_tval **in = NULL;
    sb_tval *tv = NULL;
    sb_vinfo infos_small[16], *infos_big = NULL;
    int status = SB_OK;
    if (!p->values || !p->steps) { status = sb_fail(SB_ERR_NO_MEMORY, "out of memory while planning"); goto fail; }
    memcpy(p->values, init, (size_t)g->n_values * sizeof *p->values);
    int max_in = 1;
    for (int k = start; k < g->n_nodes; ++k) if (g->nodes[k].n_in > max_in) max_in = g->nodes[k].n_in;
    in = malloc((size_t)max_in * sizeof *in);
    tv = malloc((size_t)max_in * sizeof *tv);
    if (!in || !tv) { status = sb_fail(SB_ERR_NO_MEMORY, "out of memory while planning"); goto fail; }
    p->max_inputs = max_in;
    for (int k = start; k < g->n_nodes; ++k) {
        const sb_node *n = &g->nodes[k];
        int all_known = 1;
        for (int i = 0; i < n->n_in; ++i) {
            int v = n->in[i];
            if (v < 0 || n->consumed[i]) { in[i] = NULL; continue; }
            const sb_plan_value *pv = &p->values[v];
            if (pv->where == PV_NONE) {
                status = sb_fail(SB_ERR_VALUE, "node %d (%s): input '%s' has no value", n->index,
                                 n->op_type, g->values[v].name);
                goto fail;
            }
            tv[i].info = pv->info;
            tv[i].data = pv->where == PV_CONST || pv->where == PV_KNOWN ? pv->data : NULL;
            if (!tv[i].data && sb_vinfo_numel(&pv->info) != 0) all_known = 0;
            in[i] = &tv[i];
        }
        sb_vinfo *infos = n->n_out <= 16 ? infos_small : realloc(infos_big, (size_t)n->n_out * sizeof *infos);
        if (!infos) {
            status = sb_fail(SB_ERR_NO_MEMORY, "out of memory while planning");
            goto fail;
        }
        if (infos != infos_small) infos_big = infos;
        memset(infos, 0, (size_t)(n->n_out > 16 ? n->n_out : 16) * sizeof *infos);
        sb_node_needs I;
        status = sb_node_infer(g, n, in, infos, &I);
        if (status == SB_NEEDS_VALUES) {   /* the run infers it, then plans the rest */
            status = SB_OK;
            p->dynamic = k;
            break;
        }
        if (status) goto fail;
        int64_t total = 0;
        for (int j = 0; j < n->n_out; ++j) {
            if (n->out[j] < 0) continue;   /* an output the node leaves out */
            int64_t bytes = sb_vinfo_bytes(&infos[j]);
            if (bytes < 0) {
                char where[512];
                sb_node_where(n, where, sizeof where);
                status = sb_fail(SB_ERR_VALUE, "%s: output %d has more than 2^40 elements or no type",
                                 where, j);
                goto fail;
            }
            total += bytes;
        }
        if ((all_known || (n->op->flags & SB_OP_SHAPE_ONLY)) && total <= KNOWN_LIMIT) {
            if ((status = compute_now(s, p, n, in, infos, I.workspace))) goto fail;
            continue;
        }
        sb_graph_step *st = &p->steps[p->n_steps++];
        st->node = k, st->workspace_bytes = I.workspace, st->workspace = 0, st->prepared = NULL;
        st->views = I.outputs_view_input && n->n_in > 0 && in[0] != NULL;
        st->gathers = I.inputs_in_output;
        if ((status = sb_node_prepare(g, n, in, infos, &st->prepared))) goto fail;
        for (int j = 0; j < n->n_out; ++j) {
            int v = n->out[j];
            if (v < 0) continue;
            sb_plan_value *pv = &p->values[v];
            memset(pv, 0, sizeof *pv);
            pv->info = infos[j];
            int last = s->last_reader[v] > k ? s->last_reader[v] : k;
            int source = -1;
            int64_t at = 0;   /* where in the source's bytes */
            if (st->views) {
                source = 0;
                for (int i = 0; i < j; ++i) at += sb_vinfo_bytes(&infos[i]);
            } else if (j == 0 && (n->op->flags & SB_OP_VIEW)) source = 0;
            else if (j == 0 && I.inplace >= 0 && I.inplace < n->n_in && in[I.inplace]) {
                int r = root_of(p->values, n->in[I.inplace]);
                int shared = 0;
                for (int i = 0; i < n->n_in; ++i)
                    if (i != I.inplace && n->in[i] >= 0 && root_of(p->values, n->in[i]) == r) shared = 1;
                if (!shared && p->values[r].where == PV_ARENA && p->values[r].last == k &&
                    sb_vinfo_bytes(&in[I.inplace]->info) == sb_vinfo_bytes(&infos[0]))
                    source = I.inplace;
            }
            if (source >= 0) {
                int r = root_of(p->values, n->in[source]);
                const sb_plan_value *src = &p->values[n->in[source]];
                pv->where = PV_ALIAS;
                pv->alias = r;
                pv->alias_offset = (src->where == PV_ALIAS ? src->alias_offset : 0) + at;
                if (p->values[r].where == PV_ARENA && p->values[r].last < last) p->values[r].last = last;
            } else {
                pv->where = PV_ARENA;
                pv->first = k, pv->last = last;
            }
        }
    }
    place_gathered_inputs(g, p);
    if ((status = assign_arena(p, g->n_values))) goto fail;
    free(infos_big);
    free(in);
    free(tv);
    *out = p;
    return SB_OK;
fail:
    free(infos_big);
    free(in);
    free(tv);
    sb_plan_free(p);
    return status;
}
