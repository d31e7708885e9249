/* A node's subgraph, loaded and run as a session of its own (subgraph.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/error.h"
#include "graph/runtime.h"
#include "graph/subgraph.h"
#include "framework/memory.h"
#include "math/narrow_float.h"

struct sb_subgraph {
    sb_session *session;
    const char *attr;            /* the attribute it came from ("then_branch") */
    int n_declared;              /* its declared inputs */
    int *implicit_of;            /* per graph input after them: the node's implicit input
                                  * it is (outer constants are constants there instead) */
};

static void free_session(void *s) { sb_session_free(s); }

int sb_subgraph_load(sb_load_ctx *L, const char *attr, int n_inputs, sb_subgraph **out)
{
    *out = NULL;
    const sb_onnx_graph *pg = sb_attr_graph(L, attr);
    if (!pg) return L->status;
    if (n_inputs >= 0 && pg->input_count != (size_t)n_inputs)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%s has %zu inputs; it must have %d", attr,
                            pg->input_count, n_inputs);
    const sb_node *n = L->node;
    int first = n->n_in - n->n_implicit;
    const char **names = malloc((size_t)(n->n_implicit + 1) * sizeof *names);
    if (!names) return sb_load_fail(L, SB_ERR_NO_MEMORY, "out of memory");
    for (int i = 0; i < n->n_implicit; ++i) names[i] = L->graph->values[n->in[first + i]].name;
    sb_graph *g = NULL;
    int status = sb_graph_load_subgraph(L->graph, pg, names, n->n_implicit, &g);
    int *implicit_of = NULL;
    if (!status) {
        int extra = g->n_inputs - (int)pg->input_count;
        implicit_of = sb_arena_alloc(&L->graph->arena, (size_t)extra + 1, sizeof *implicit_of);
        if (!implicit_of) status = sb_fail(SB_ERR_NO_MEMORY, "out of memory");
        for (int i = 0; !status && i < extra; ++i) {
            const char *name = g->inputs[pg->input_count + (size_t)i].name;
            implicit_of[i] = -1;
            for (int k = 0; k < n->n_implicit && implicit_of[i] < 0; ++k)
                if (strcmp(names[k], name) == 0) implicit_of[i] = k;
        }
    }
    free(names);
    sb_session *s = NULL;
    if (!status) status = sb_session_from_graph(g, &s);
    else sb_graph_free(g);
    if (status) {
        char where[512];
        sb_node_where(n, where, sizeof where);
        char prefix[700];
        snprintf(prefix, sizeof prefix, "%s, in %s: ", where, attr);
        sb_error_prefix(prefix);
        return status;
    }
    if (sb_graph_keep_object(L->graph, s, free_session))
        return sb_load_fail(L, SB_ERR_NO_MEMORY, "out of memory");
    sb_subgraph *sub = sb_arena_alloc(&L->graph->arena, 1, sizeof *sub);
    if (!sub) return sb_load_fail(L, SB_ERR_NO_MEMORY, "out of memory");
    sub->session = s;
    sub->attr = attr;
    sub->n_declared = (int)pg->input_count;
    sub->implicit_of = implicit_of;
    *out = sub;
    return SB_OK;
}

int sb_subgraph_inputs(const sb_subgraph *s) { return s->n_declared; }
int sb_subgraph_outputs(const sb_subgraph *s) { return s->session->graph->n_outputs; }

void sb_subgraph_output_decl(const sb_subgraph *s, int j, int *dtype, int *rank, int64_t *dims)
{
    const sb_io *io = &s->session->graph->outputs[j];
    *dtype = io->dtype, *rank = io->rank;
    for (int d = 0; d < io->rank; ++d) dims[d] = io->dims[d];
}

static void to_arg(const sb_tval *t, sb_tensor_arg *a)
{
    memset(a, 0, sizeof *a);
    a->dtype = t->info.dtype, a->rank = t->info.rank;
    for (int d = 0; d < t->info.rank; ++d) a->dims[d] = t->info.dims[d];
    a->data = (int64_t)(intptr_t)t->data;
}

int sb_subgraph_run(sb_subgraph *s, const sb_eval_ctx *E, const sb_tval *const *in, sb_tval *out)
{
    const sb_node *n = E->node;
    const sb_graph *g = s->session->graph;
    int count = g->n_inputs, n_out = g->n_outputs;
    sb_tensor_arg small_in[16], small_out[16];
    int64_t small_idx[16];
    sb_tensor_arg *args = count <= 16 ? small_in : malloc((size_t)count * sizeof *args);
    sb_tensor_arg *outs = n_out <= 16 ? small_out : malloc((size_t)n_out * sizeof *outs);
    int64_t *idx = n_out <= 16 ? small_idx : malloc((size_t)n_out * sizeof *idx);
    int status = SB_OK;
    if (!args || !outs || !idx) {
        status = sb_fail(SB_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    /* the graph's inputs: the declared ones, then the implicit ones (an
     * initializer of the subgraph that shadows a declared input is not one) */
    int first = n->n_in - n->n_implicit;
    for (int i = 0; i < count; ++i) {
        const sb_io *io = &g->inputs[i];
        const sb_tval *t = NULL;
        if (i < s->n_declared) {
            t = in[i];
        } else {
            int k = s->implicit_of[i - s->n_declared];
            t = k >= 0 ? E->in[first + k] : NULL;
        }
        if (!t) {
            status = sb_fail(SB_ERR_VALUE, "input '%s' of the subgraph has no value", io->name);
            goto done;
        }
        to_arg(t, &args[i]);
    }
    for (int j = 0; j < n_out; ++j) idx[j] = j;
    sb_run_args a = {0};
    a.inputs = (int64_t)(intptr_t)args;
    a.output_count = n_out;
    a.output_indices = (int64_t)(intptr_t)idx;
    a.outputs = (int64_t)(intptr_t)outs;
    a.max_threads = E->threads;
    status = sb_session_run(s->session, &a);
    if (status) goto done;
    for (int j = 0; j < n_out; ++j) {
        memset(&out[j], 0, sizeof out[j]);
        out[j].info.dtype = (int)outs[j].dtype, out[j].info.rank = (int)outs[j].rank;
        for (int d = 0; d < out[j].info.rank; ++d) out[j].info.dims[d] = outs[j].dims[d];
        out[j].data = (void *)(intptr_t)outs[j].data;
        if (outs[j].dtype == SB_DT_FLOAT16 || outs[j].dtype == SB_DT_BFLOAT16) {
            /* a declared float16 / bfloat16 output: back to the float32 the graph holds */
            int64_t n = sb_vinfo_numel(&out[j].info);
            float *f = sb_alloc_aligned((size_t)(n > 0 ? n : 1) * 4);
            const uint16_t *h = out[j].data;
            for (int64_t e = 0; f && e < n; ++e)
                f[e] = outs[j].dtype == SB_DT_FLOAT16 ? sb_float16_value(h[e]) : sb_bfloat16_value(h[e]);
            sb_free_aligned(out[j].data);
            out[j].data = f;
            out[j].info.dtype = SB_DT_FLOAT;
            if (!f) {
                for (int i = 0; i < j; ++i) sb_free_aligned(out[i].data);
                for (int i = j + 1; i < n_out; ++i) sb_free_aligned((void *)(intptr_t)outs[i].data);
                status = sb_fail(SB_ERR_NO_MEMORY, "out of memory");
                goto done;
            }
        }
    }
done:
    if (status) {
        char where[512];
        sb_node_where(n, where, sizeof where);
        char prefix[700];
        snprintf(prefix, sizeof prefix, "%s, in %s: ", where, s->attr);
        sb_error_prefix(prefix);
    }
    if (args != small_in) free(args);
    if (outs != small_out) free(outs);
    if (idx != small_idx) free(idx);
    return status;
}
