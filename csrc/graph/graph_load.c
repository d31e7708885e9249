/* Loading a model (graph.h): the file read, its values named, its nodes put
 * in run order, nodes whose inputs are all constants computed once (with
 * the kernels a run would use: the same bits), the load-time rewrites
 * applied, every remaining node's op loaded, and constants that no node
 * reads any more freed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/error.h"
#include "graph/graph.h"
#include "graph/early_opsets.h"
#include "graph/node_eval.h"
#include "graph/scope.h"
#include "graph/narrow.h"
#include "framework/memory.h"

#define MIN_OPSET 1
#define FULL_OPSET 7   /* from here on every operator runs; below, the unchanged ones */
#define MAX_OPSET 28

/* Frees one kept buffer early (a constant nothing reads any more). */
static void drop_buffer(sb_graph *g, void *buffer)
{
    for (size_t i = 0; i < g->n_buffers; ++i) {
        if (g->buffers[i] == buffer) {
            sb_free_aligned(buffer);
            g->buffers[i] = g->buffers[--g->n_buffers];
            return;
        }
    }
}

/* ---- graph inputs and outputs --------------------------------------------------- */

static int read_io(sb_graph *g, const sb_onnx_value_info *vi, sb_io *io)
{
    memset(io, 0, sizeof *io);
    if (strcmp(vi->kind, "tensor") != 0)
        return sb_fail(SB_ERR_UNSUPPORTED, "graph value '%s' is %s %s; only tensors are supported",
                       vi->name, strchr("aeiou", vi->kind[0]) ? "an" : "a", vi->kind);
    io->name = sb_arena_strdup(&g->arena, vi->name, strlen(vi->name));
    if (!io->name) return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    io->dtype = (int)vi->elem_type;
    io->rank = vi->has_shape ? vi->rank : -1;
    if (io->rank > SB_MAX_RANK)
        return sb_fail(SB_ERR_UNSUPPORTED, "graph value '%s' has %d dimensions; at most %d are supported",
                       vi->name, io->rank, SB_MAX_RANK);
    for (int d = 0; d < (io->rank > 0 ? io->rank : 0); ++d) {
        io->dims[d] = vi->dims[d];
        if (vi->dim_params[d]) {
            io->dim_names[d] = sb_arena_strdup(&g->arena, vi->dim_params[d], strlen(vi->dim_params[d]));
            if (!io->dim_names[d]) return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
        }
    }
    return SB_OK;
}

/* ---- nodes ------------------------------------------------------------------------ */

static int make_node(sb_graph *g, const sb_onnx_node *p, int index, sb_node *n)
{
    memset(n, 0, sizeof *n);
    n->index = index;
    n->name = sb_arena_strdup(&g->arena, p->name, strlen(p->name));
    n->op_type = sb_arena_strdup(&g->arena, p->op_type, strlen(p->op_type));
    size_t nin = p->input_count;
    const char **implicit = NULL;
    int n_implicit = 0;
    if (sb_scope_has_subgraphs(p)) {
        /* the inputs as written (an op reads them by position), then the
         * outer-scope values its subgraphs read */
        int status = sb_scope_free_names(p, &implicit, &n_implicit);
        if (status) return status;
    } else {
        while (nin > 0 && p->inputs[nin - 1][0] == 0) --nin;   /* trailing omitted ones */
    }
    if (nin > 100000 || p->output_count > 100000 || n_implicit > 100000) {
        free(implicit);
        return sb_fail(SB_ERR_UNSUPPORTED, "node %d: too many inputs or outputs", index);
    }
    size_t total = nin + (size_t)n_implicit;
    n->n_in = (int)total, n->n_out = (int)p->output_count, n->n_implicit = n_implicit;
    n->in = sb_arena_alloc(&g->arena, total, sizeof(int));
    n->out = sb_arena_alloc(&g->arena, p->output_count, sizeof(int));
    n->consumed = sb_arena_alloc(&g->arena, total, 1);
    if (!n->name || !n->op_type || !n->in || !n->out || !n->consumed) {
        free(implicit);
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    }
    n->fused_bias = n->fused_affine = n->fused_residual = -1;
    for (size_t i = 0; i < total; ++i) {
        const char *name = i < nin ? p->inputs[i] : implicit[i - nin];
        n->in[i] = name[0] ? sb_graph_value(g, name, 1) : -1;
        if (n->in[i] == -2) {
            free(implicit);
            return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
        }
    }
    free(implicit);
    for (size_t j = 0; j < p->output_count; ++j) {
        n->out[j] = p->outputs[j][0] ? sb_graph_value(g, p->outputs[j], 1) : -1;
        if (n->out[j] == -2) return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    }
    return SB_OK;
}

/* Node positions in an order where every input is produced before use (ONNX
 * requires files to be sorted; this also accepts unsorted ones). */
static int topological(sb_graph *g, const sb_onnx_node *protos, sb_node *nodes, int count,
                       int *order)
{
    unsigned char *done = calloc((size_t)count + 1, 1);
    unsigned char *ready = calloc((size_t)g->n_values + 1, 1);
    if (!done || !ready) {
        free(done);
        free(ready);
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    }
    for (int v = 0; v < g->n_values; ++v) ready[v] = g->values[v].kind != SB_V_COMPUTED;
    int placed = 0, progress = 1;
    while (progress) {
        progress = 0;
        for (int i = 0; i < count; ++i) {
            if (done[i]) continue;
            int ok = 1;
            for (int k = 0; k < nodes[i].n_in && ok; ++k)
                ok = nodes[i].in[k] < 0 || ready[nodes[i].in[k]];
            if (!ok) continue;
            order[placed++] = i;
            done[i] = 1;
            for (int j = 0; j < nodes[i].n_out; ++j)
                if (nodes[i].out[j] >= 0) ready[nodes[i].out[j]] = 1;
            progress = 1;
        }
    }
    int status = SB_OK;
    if (placed != count) {
        for (int i = 0; i < count; ++i) {
            if (done[i]) continue;
            const char *missing = "";
            for (int k = 0; k < nodes[i].n_in; ++k)
                if (nodes[i].in[k] >= 0 && !ready[nodes[i].in[k]]) {
                    missing = g->values[nodes[i].in[k]].name;
                    break;
                }
            status = sb_fail(SB_ERR_UNSUPPORTED, "node %d '%s' (%s): input '%s' is produced by no "
                             "node, initializer or graph input (or the graph has a cycle)",
                             nodes[i].index, protos[nodes[i].index].name, nodes[i].op_type, missing);
            break;
        }
    }
    free(done);
    free(ready);
    return status;
}

/* Below opset 7: the operator as opset 7 defines it, when ONNX gave it no
 * new version after the model's opset (early_opsets.h); else an error. */
static int early_op_check(int opset, const char *op_type, const char *where)
{
    for (size_t i = 0; i < sizeof SB_EARLY_OPS / sizeof *SB_EARLY_OPS; ++i) {
        const sb_early_op *e = &SB_EARLY_OPS[i];
        if (strcmp(e->op, op_type) != 0) continue;
        if (e->first > opset)
            return sb_fail(SB_ERR_UNSUPPORTED, "%s: operator '%s' is not defined at opset %d", where,
                           op_type, opset);
        for (int v = opset + 1; v <= FULL_OPSET; ++v)
            if (e->changed & (1u << v))
                return sb_fail(SB_ERR_UNSUPPORTED, "%s: the model's opset %d has an older '%s' (ONNX "
                               "changed it at opset %d); below opset %d only operators unchanged "
                               "since then run", where, opset, op_type, v, FULL_OPSET);
        return SB_OK;
    }
    return sb_fail(SB_ERR_UNSUPPORTED, "%s: operator '%s' is not defined at opset %d", where, op_type,
                   opset);
}

/* The node's op, or an error: another domain, a model-local function, an
 * operator the runtime lacks, an operator older than the runtime's below
 * opset 7. */
static int find_op(const sb_graph *g, const sb_onnx_model *m, const sb_onnx_node *p, sb_node *n)
{
    char where[512];
    sb_node_where(n, where, sizeof where);
    if (p->domain[0] && strcmp(p->domain, "ai.onnx") != 0)
        return sb_fail(SB_ERR_UNSUPPORTED, "%s: domain '%s' is not supported (the default ONNX "
                       "domain is)", where, p->domain);
    for (size_t i = 0; i < m->function_count; ++i)
        if (strcmp(m->functions[i], p->op_type) == 0)
            return sb_fail(SB_ERR_UNSUPPORTED, "%s: model-local functions are not supported", where);
    n->op = sb_op_find(p->op_type);
    if (!n->op) return sb_fail(SB_ERR_UNSUPPORTED, "%s: operator '%s' is not supported", where, p->op_type);
    if (g->declared_opset < FULL_OPSET) {
        int status = early_op_check(g->declared_opset, p->op_type, where);
        if (status) return status;
    }
    /* Every operator's run writes output 0 (LSTM and GRU check each) */
    if (n->n_out == 0)
        return sb_fail(SB_ERR_VALUE, "%s: the node has no outputs", where);
    if (n->out[0] < 0 && !(n->op->flags & SB_OP_OPTIONAL_FIRST))
        return sb_fail(SB_ERR_VALUE, "%s: output 0 is left out (an empty name); %s needs it", where,
                       p->op_type);
    return SB_OK;
}

/* The load of an op that declares int_attrs: each attribute (or its
 * default) into one int64_t of the state, in order. */
static int load_int_attrs(sb_load_ctx *L, const sb_int_attr *attrs)
{
    size_t count = 0;
    while (count < SB_MAX_INT_ATTRS && attrs[count].name) ++count;
    int64_t *values = sb_load_state(L, count * sizeof *values);
    if (!values) return L->status;
    for (size_t i = 0; i < count; ++i) values[i] = sb_attr_int(L, attrs[i].name, attrs[i].fallback);
    return L->status;
}

/* Runs op->load (or reads op->int_attrs) on one node and refuses attributes
 * it never read. */
static int load_op(sb_graph *g, const sb_onnx_node *p, sb_node *n)
{
    sb_load_ctx L = {0};
    L.node = n, L.proto = p, L.graph = g;
    L.opset = g->opset, L.mode = g->mode, L.path = g->path, L.threads = g->threads;
    unsigned char used_small[64];
    L.used = p->attr_count <= sizeof used_small ? used_small : calloc(p->attr_count, 1);
    if (!L.used) return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    memset(L.used, 0, p->attr_count <= sizeof used_small ? sizeof used_small : 0);
    int status = n->op->load ? n->op->load(&L)
               : n->op->int_attrs[0].name ? load_int_attrs(&L, n->op->int_attrs) : SB_OK;
    if (!status && L.status) status = L.status;
    if (!status && L.variant) n->op = L.variant;
    for (size_t i = 0; !status && i < p->attr_count; ++i)
        if (!L.used[i])
            status = sb_load_fail(&L, SB_ERR_UNSUPPORTED, "attribute '%s' is not supported",
                                  p->attrs[i].name);
    if (L.used != used_small) free(L.used);
    return status;
}

/* A constant's decoded buffer once no node will read it any more: no node
 * still to load reads it (pending), no loaded node reads it at run (held),
 * and it is not a graph output. */
static void drop_if_unread(sb_graph *g, int v, const int *pending, const unsigned char *held)
{
    sb_value *val = &g->values[v];
    if (val->kind == SB_V_CONST && pending[v] == 0 && !held[v] && !val->is_output && val->konst.data) {
        drop_buffer(g, val->konst.data);
        val->konst.data = NULL;
    }
}

/* Loads every remaining node's op in order and frees each constant as soon as
 * the last node that reads it has loaded and holds what it needs (packed
 * weights): the decoded weights and their packed copies are then never all
 * resident at once, which bounds the load's peak memory. */
static int load_ops(sb_graph *g, const sb_onnx_node **protos)
{
    int *pending = calloc((size_t)g->n_values + 1, sizeof *pending);
    unsigned char *held = calloc((size_t)g->n_values + 1, 1);
    int status = SB_OK;
    if (!pending || !held) {
        status = sb_fail(SB_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    for (int k = 0; k < g->n_nodes; ++k) {
        const sb_node *n = &g->nodes[k];
        if (!n->op) continue;   /* absorbed by a rewrite */
        for (int i = 0; i < n->n_in; ++i)
            if (n->in[i] >= 0) pending[n->in[i]]++;
        if (n->fused_bias >= 0) held[n->fused_bias] = 1;   /* the op reads it at run */
        if (n->fused_affine >= 0) held[n->fused_affine] = 1;
    }
    for (int v = 0; v < g->n_values; ++v) drop_if_unread(g, v, pending, held);
    for (int k = 0; k < g->n_nodes && !status; ++k) {
        sb_node *n = &g->nodes[k];
        if (!n->op) continue;
        if ((status = load_op(g, protos[k], n))) break;
        for (int i = 0; i < n->n_in; ++i) {
            int v = n->in[i];
            if (v < 0) continue;
            pending[v]--;
            if (!n->consumed[i]) held[v] = 1;
            drop_if_unread(g, v, pending, held);
        }
    }
done:
    free(pending);
    free(held);
    return status;
}

/* Computes a node whose inputs are all constants; its outputs become constants. */
static int fold(sb_graph *g, sb_node *n)
{
    const sb_tval *ins[64];
    sb_tval outs_small[16], *outp_small[16];
    sb_vinfo infos_small[16];
    size_t slots = (size_t)(n->n_out > 16 ? n->n_out : 16);
    const sb_tval **in = n->n_in <= 64 ? ins : malloc((size_t)n->n_in * sizeof *in);
    sb_tval *outs = n->n_out <= 16 ? outs_small : malloc(slots * sizeof *outs);
    sb_tval **outp = n->n_out <= 16 ? outp_small : malloc(slots * sizeof *outp);
    sb_vinfo *infos = n->n_out <= 16 ? infos_small : malloc(slots * sizeof *infos);
    if (!in || !outs || !outp || !infos) {
        if (in != ins) free(in);
        if (outs != outs_small) free(outs);
        if (outp != outp_small) free(outp);
        if (infos != infos_small) free(infos);
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    }
    /* as a run sees them: a consumed input is null (the op holds what it needs) */
    for (int i = 0; i < n->n_in; ++i)
        in[i] = n->in[i] >= 0 && !n->consumed[i] ? &g->values[n->in[i]].konst : NULL;
    sb_node_needs needs;
    int status = sb_node_infer(g, n, in, infos, &needs);
    if (status == SB_NEEDS_VALUES)
        status = sb_fail(SB_ERR_VALUE, "node %d (%s): its constant inputs lack values", n->index, n->op_type);
    void *workspace = NULL;
    if (!status && needs.workspace > 0 && !(workspace = sb_alloc_aligned((size_t)needs.workspace)))
        status = sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    for (int j = 0; j < n->n_out && !status; ++j) {
        outs[j].info = infos[j];
        outs[j].data = NULL;
        outp[j] = n->out[j] >= 0 ? &outs[j] : NULL;
        if (n->out[j] < 0) continue;   /* an output the node leaves out */
        int64_t bytes = sb_vinfo_bytes(&infos[j]);
        if (bytes < 0) {
            status = sb_fail(SB_ERR_VALUE, "node %d (%s): output %d is too large", n->index, n->op_type, j);
            break;
        }
        outs[j].data = sb_alloc_aligned((size_t)(bytes ? bytes : 1));
        if (!outs[j].data || sb_graph_keep_buffer(g, outs[j].data)) {
            sb_free_aligned(outs[j].data);
            outs[j].data = NULL;
            status = sb_fail(SB_ERR_NO_MEMORY, "out of memory");
        }
    }
    if (!status) status = sb_node_run(g, n, g->threads, NULL, in, outp, workspace, 1);
    sb_free_aligned(workspace);
    for (int j = 0; !status && j < n->n_out; ++j) {
        if (n->out[j] < 0) continue;
        sb_value *v = &g->values[n->out[j]];
        v->kind = SB_V_CONST;
        v->konst = outs[j];
    }
    if (in != ins) free(in);
    if (outs != outs_small) free(outs);
    if (outp != outp_small) free(outp);
    if (infos != infos_small) free(infos);
    return status;
}

static int make_labels(sb_graph *g)
{
    g->labels = sb_arena_alloc(&g->arena, (size_t)g->n_nodes + 1, sizeof(char *));
    if (!g->labels) return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    for (int i = 0; i < g->n_nodes; ++i) {
        sb_node *n = &g->nodes[i];
        char text[256];
        snprintf(text, sizeof text, "%s%s%s%s", n->op_type, n->fused_bias >= 0 ? "+bias" : "",
                 n->fused_affine >= 0 ? "+batch_norm" : "", n->fused_residual >= 0 ? "+add" : "");
        if (n->activation) {
            static const char *const names[] = {
                "", "relu", "relu6", "leaky_relu", "gelu", "gelu_tanh", "silu", "hardswish",
                "hardsigmoid", "sigmoid", "tanh", "hardswish_onnx", "hardsigmoid_onnx",
                "swish_onnx"};
            _Static_assert(sizeof names / sizeof names[0] == SB_ACT_COUNT,
                           "a name for each activation of samebits.h");
            int code = (int)(n->activation & 0xFF);
            size_t len = strlen(text);
            snprintf(text + len, sizeof text - len, "+%s",
                     code < (int)(sizeof names / sizeof names[0]) ? names[code] : "activation");
        }
        int found = -1;
        for (int k = 0; k < g->n_labels && found < 0; ++k)
            if (strcmp(g->labels[k], text) == 0) found = k;
        if (found < 0) {
            found = g->n_labels++;
            g->labels[found] = sb_arena_strdup(&g->arena, text, strlen(text));
            if (!g->labels[found]) return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
        }
        n->label = found;
    }
    return SB_OK;
}

/* The graph of pg (the file's main graph, or a subgraph with its implicit
 * inputs) into g, whose mode, path, threads and opsets are set. */
static int build(sb_graph *g, const sb_onnx_model *m, const sb_onnx_graph *pg,
                 const sb_graph_options *o, const char *const *implicit,
                 const sb_tval *outer_consts, const unsigned char *outer_narrow, int n_implicit,
                 int is_sub)
{
    int status = SB_OK;
    sb_node *all = NULL;
    int *order = NULL;
    const sb_onnx_node **node_protos = NULL;
    unsigned char *seed = NULL;
    g->model = m, g->options = o;
    if (pg->sparse_initializer_count) {
        status = sb_fail(SB_ERR_UNSUPPORTED, "sparse initializers are not supported");
        goto done;
    }
    /* initializers: constants */
    for (size_t i = 0; i < pg->initializer_count; ++i) {
        const sb_onnx_tensor *t = &pg->initializers[i];
        int v = sb_graph_value(g, t->name, 1);
        if (v < 0) { status = sb_fail(SB_ERR_NO_MEMORY, "out of memory"); goto done; }
        char what[600];
        snprintf(what, sizeof what, "initializer '%s'", t->name);
        /* a repeated name: the last wins (the earlier buffer is freed with the graph) */
        if ((status = sb_tensor_from_proto(g, t, o, what, &g->values[v].konst))) goto done;
        g->values[v].kind = SB_V_CONST;
    }
    /* graph inputs (initializers excluded) and outputs */
    g->inputs = sb_arena_alloc(&g->arena, pg->input_count + (size_t)n_implicit, sizeof(sb_io));
    g->outputs = sb_arena_alloc(&g->arena, pg->output_count, sizeof(sb_io));
    if (!g->inputs || !g->outputs) { status = sb_fail(SB_ERR_NO_MEMORY, "out of memory"); goto done; }
    for (size_t i = 0; i < pg->input_count; ++i) {
        int v = sb_graph_value(g, pg->inputs[i].name, 1);
        if (v < 0) { status = sb_fail(SB_ERR_NO_MEMORY, "out of memory"); goto done; }
        sb_io io;
        if ((status = read_io(g, &pg->inputs[i], &io))) goto done;
        if (g->values[v].kind == SB_V_CONST) continue;
        if (g->values[v].kind == SB_V_INPUT) {
            status = sb_fail(SB_ERR_UNSUPPORTED, "graph input '%s' is declared twice", io.name);
            goto done;
        }
        io.value = v;
        /* a Loop body's carried values may change shape between iterations */
        if (is_sub) io.rank = -1;
        g->values[v].kind = SB_V_INPUT;
        g->inputs[g->n_inputs++] = io;
    }
    for (int i = 0; i < n_implicit; ++i) {   /* outer-scope values: any type and shape */
        int v = sb_graph_value(g, implicit[i], 1);
        if (v < 0) { status = sb_fail(SB_ERR_NO_MEMORY, "out of memory"); goto done; }
        if (g->values[v].kind != SB_V_COMPUTED) continue;   /* cannot be: defined inside */
        if (outer_consts && outer_consts[i].data) {
            /* an outer constant (weights, a folded value) is a constant here
             * too, so that the subgraph's ops pack and fold it; its bytes
             * stay the outer graph's, which outlives this one */
            g->values[v].kind = SB_V_CONST;
            g->values[v].konst = outer_consts[i];
            continue;
        }
        sb_io io;
        memset(&io, 0, sizeof io);
        io.value = v, io.name = g->values[v].name, io.rank = -1;
        g->values[v].kind = SB_V_INPUT;
        g->inputs[g->n_inputs++] = io;
    }
    for (size_t i = 0; i < pg->output_count; ++i) {
        sb_io io;
        if ((status = read_io(g, &pg->outputs[i], &io))) goto done;
        int v = sb_graph_value(g, io.name, 1);
        if (v < 0) { status = sb_fail(SB_ERR_NO_MEMORY, "out of memory"); goto done; }
        io.value = v;
        g->values[v].is_output = 1;
        g->outputs[g->n_outputs++] = io;
    }
    /* nodes */
    int count = (int)pg->node_count;
    if (pg->node_count > 10000000) { status = sb_fail(SB_ERR_UNSUPPORTED, "too many nodes"); goto done; }
    all = calloc((size_t)count + 1, sizeof *all);
    node_protos = calloc((size_t)count + 1, sizeof *node_protos);
    if (!all || !node_protos) { status = sb_fail(SB_ERR_NO_MEMORY, "out of memory"); goto done; }
    for (int i = 0; i < count; ++i) {
        node_protos[i] = &pg->nodes[i];
        if ((status = make_node(g, &pg->nodes[i], i, &all[i]))) goto done;
        for (int j = 0; j < all[i].n_out; ++j) {
            int v = all[i].out[j];
            if (v < 0) continue;
            if (g->values[v].kind != SB_V_COMPUTED || g->values[v].readers == -1) {
                char where[512];
                sb_node_where(&all[i], where, sizeof where);
                status = sb_fail(SB_ERR_UNSUPPORTED, "%s: output '%s' is also %s", where,
                                 g->values[v].name, g->values[v].kind == SB_V_CONST ? "an initializer"
                                 : g->values[v].kind == SB_V_INPUT ? "a graph input"
                                 : "the output of another node");
                goto done;
            }
            g->values[v].readers = -1;   /* produced: marks a second producer */
        }
    }
    for (int v = 0; v < g->n_values; ++v) g->values[v].readers = 0;
    /* float16 / bfloat16 values: marked, with a rounding node after each
     * node computing one (graph/narrow.h) */
    seed = calloc((size_t)g->n_values + 1, 1);
    if (!seed) { status = sb_fail(SB_ERR_NO_MEMORY, "out of memory"); goto done; }
    for (size_t i = 0; i < pg->initializer_count; ++i) {
        int64_t t = pg->initializers[i].data_type;
        int v = sb_graph_value(g, pg->initializers[i].name, 0);
        if (v >= 0 && (t == SB_DT_FLOAT16 || t == SB_DT_BFLOAT16)) seed[v] = (unsigned char)t;
    }
    for (int i = 0; i < g->n_inputs; ++i) {
        int t = g->inputs[i].dtype;
        if (t == SB_DT_FLOAT16 || t == SB_DT_BFLOAT16) seed[g->inputs[i].value] = (unsigned char)t;
    }
    for (int i = 0; outer_narrow && i < n_implicit; ++i) {
        int v = sb_graph_value(g, implicit[i], 0);
        if (v >= 0) seed[v] = outer_narrow[i];
    }
    if ((status = sb_narrow_insert(g, seed, &all, &node_protos, &count, &g->narrow))) goto done;
    order = calloc((size_t)count + 1, sizeof *order);
    if (!order) { status = sb_fail(SB_ERR_NO_MEMORY, "out of memory"); goto done; }
    if ((status = topological(g, pg->nodes, all, count, order))) goto done;
    /* constant folding, in run order */
    g->nodes = sb_arena_alloc(&g->arena, (size_t)count + 1, sizeof(sb_node));
    if (!g->nodes) { status = sb_fail(SB_ERR_NO_MEMORY, "out of memory"); goto done; }
    const sb_onnx_node **protos = sb_arena_alloc(&g->arena, (size_t)count + 1, sizeof *protos);
    if (!protos) { status = sb_fail(SB_ERR_NO_MEMORY, "out of memory"); goto done; }
    for (int k = 0; k < count; ++k) {
        sb_node *n = &all[order[k]];
        const sb_onnx_node *p = node_protos[order[k]];
        int all_const = 1;
        for (int i = 0; i < n->n_in && all_const; ++i)
            all_const = n->in[i] < 0 || g->values[n->in[i]].kind == SB_V_CONST;
        if (!n->op && (status = find_op(g, m, p, n))) goto done;   /* (a rounding node has its op) */
        if (all_const && !(n->op->flags & SB_OP_NO_FOLD) && !n->op->eval) {
            if ((status = load_op(g, p, n))) goto done;
            if ((status = fold(g, n))) goto done;
            continue;
        }
        protos[g->n_nodes] = p;
        g->nodes[g->n_nodes++] = *n;
    }
    /* the rewrites, then every remaining node's op */
    if ((status = sb_graph_fuse(g, protos))) goto done;
    if ((status = load_ops(g, protos))) goto done;
    /* drop nodes the rewrites absorbed (op set to null) */
    int kept = 0;
    for (int k = 0; k < g->n_nodes; ++k)
        if (g->nodes[k].op) g->nodes[kept++] = g->nodes[k];
    g->n_nodes = kept;
    for (int i = 0; i < g->n_outputs; ++i) {
        int v = g->outputs[i].value, produced = g->values[v].kind != SB_V_COMPUTED;
        for (int k = 0; k < g->n_nodes && !produced; ++k)
            for (int j = 0; j < g->nodes[k].n_out; ++j) produced |= g->nodes[k].out[j] == v;
        if (!produced) {
            status = sb_fail(SB_ERR_UNSUPPORTED, "graph output '%s' is produced by nothing",
                             g->outputs[i].name);
            goto done;
        }
    }
    /* readers (the constants no reader holds unprepared were freed by load_ops) */
    for (int k = 0; k < g->n_nodes; ++k) {
        sb_node *n = &g->nodes[k];
        for (int i = 0; i < n->n_in; ++i)
            if (n->in[i] >= 0 && !n->consumed[i]) g->values[n->in[i]].readers++;
        if (n->fused_bias >= 0) g->values[n->fused_bias].readers++;   /* held by the op */
        if (n->fused_affine >= 0) g->values[n->fused_affine].readers++;
    }
    status = make_labels(g);
done:
    free(all);
    free(order);
    free(node_protos);
    free(seed);
    g->model = NULL, g->options = NULL;
    return status;
}

int sb_graph_load(const uint8_t *data, size_t size, const sb_graph_options *o, sb_graph **out)
{
    *out = NULL;
    sb_onnx_model *m = NULL;
    int status = sb_onnx_parse(data, size, &m);
    if (status) return status;
    sb_graph *g = calloc(1, sizeof *g);
    if (!g) {
        sb_onnx_free(m);
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    }
    g->mode = o->mode, g->path = o->path, g->threads = o->threads;
    int64_t opset = sb_onnx_opset_of(m, "");
    g->declared_opset = (int)(opset < 0 ? 0 : opset > 1000 ? 1000 : opset);
    g->opset = g->declared_opset < FULL_OPSET ? FULL_OPSET : g->declared_opset;
    if (opset < MIN_OPSET || opset > MAX_OPSET) {
        status = sb_fail(SB_ERR_UNSUPPORTED, "the model imports opset %lld of the default domain; "
                         "opsets %d to %d are supported (below %d, the operators ONNX has not "
                         "changed since)", (long long)(opset < 0 ? 0 : opset), MIN_OPSET, MAX_OPSET,
                         FULL_OPSET);
    } else {
        status = build(g, m, m->graph, o, NULL, NULL, NULL, 0, 0);
    }
    sb_onnx_free(m);
    if (status) sb_graph_free(g);
    else *out = g;
    return status;
}

int sb_graph_load_subgraph(const sb_graph *parent, const sb_onnx_graph *pg,
                           const char *const *implicit, int n_implicit, sb_graph **out)
{
    *out = NULL;
    if (!parent->model) return sb_fail(SB_ERR_VALUE, "a subgraph loads only while its model loads");
    sb_graph *g = calloc(1, sizeof *g);
    if (!g) return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    g->mode = parent->mode, g->path = parent->path, g->threads = parent->threads;
    g->opset = parent->opset, g->declared_opset = parent->declared_opset;
    sb_tval *consts = calloc((size_t)n_implicit + 1, sizeof *consts);
    unsigned char *narrow = calloc((size_t)n_implicit + 1, 1);
    if (!consts || !narrow) {
        free(consts);
        free(narrow);
        sb_graph_free(g);
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    }
    for (int i = 0; i < n_implicit; ++i) {
        int v = sb_graph_value((sb_graph *)parent, implicit[i], 0);
        if (v >= 0 && parent->values[v].kind == SB_V_CONST) consts[i] = parent->values[v].konst;
        if (v >= 0 && parent->narrow) narrow[i] = parent->narrow[v];
    }
    int status = build(g, parent->model, pg, parent->options, implicit, consts, narrow, n_implicit, 1);
    free(consts);
    free(narrow);
    if (status) sb_graph_free(g);
    else *out = g;
    return status;
}
