/* Graph rewrites at load, after constant folding and before the ops load.
 *
 * Both modes, only rewrites that give the bits of the graph as written:
 * - an activation (Relu, Clip to [0, 6], LeakyRelu, Sigmoid, Tanh,
 *   HardSwish, HardSigmoid with beta 0.5) that is the only reader of a
 *   Conv, Gemm (run as one linear) or MatMul (constant weights) output runs
 *   as that product's epilogue, which applies the standalone operator's
 *   definition to each finished sum; Clip to [0, 6] equals relu6 bit for
 *   bit (maximum(-0, +0) is +0, NaN stays NaN); so does the pair
 *   Mul(v, Sigmoid(v)) that exporters write for SiLU/Swish, when the two
 *   are v's only readers (SB_ACT_SWISH_ONNX: the sigmoid of that mode's
 *   Sigmoid node, then one rounded multiply), and the chain paddle2onnx
 *   writes for HardSwish, Add(v, 3) -> Clip(0, 6) -> Mul(v, .) -> Div(., 6),
 *   which is torch's hardswish step for step (SB_ACT_HARDSWISH);
 * - an Add of a constant 1-D bias that is the only reader of a MatMul with
 *   constant 2-D weights becomes the product's bias (one rounded add after
 *   each sum, as the Add does).
 * - a BatchNormalization (inference, constant statistics) that is the only
 *   reader of a Conv with constant weights, and then an Add of a computed
 *   value (a residual) that is the only reader of the result, run in the
 *   Conv's epilogue with the standalone operators' steps (in fast mode when
 *   the folding below did not apply).
 * Fast mode only: a BatchNormalization (inference, constant statistics)
 * that is the only reader of a Conv with constant weights is folded into
 * its weights and bias (this changes bits).
 *
 * The product keeps its name and takes over the absorbed node's outputs;
 * the absorbed node's op is cleared (graph_load.c drops it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "math/arith.h"
#include "graph/error.h"
#include "graph/graph.h"
#include "framework/memory.h"

typedef struct {
    int *count;                  /* per value: node inputs reading it */
    int *reader;                 /* per value: the (last) node reading it */
    int *first;                  /* per value: the first node reading it */
} readers;

static int count_readers(sb_graph *g, readers *r)
{
    r->count = calloc((size_t)g->n_values + 1, sizeof(int));
    r->reader = calloc((size_t)g->n_values + 1, sizeof(int));
    r->first = calloc((size_t)g->n_values + 1, sizeof(int));
    if (!r->count || !r->reader || !r->first) return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    for (int k = 0; k < g->n_nodes; ++k) {
        const sb_node *n = &g->nodes[k];
        if (!n->op) continue;
        for (int i = 0; i < n->n_in; ++i) {
            if (n->in[i] < 0) continue;
            if (!r->count[n->in[i]]++) r->first[n->in[i]] = k;
            r->reader[n->in[i]] = k;
        }
    }
    return SB_OK;
}

static void free_readers(readers *r)
{
    free(r->count);
    free(r->reader);
    free(r->first);
}

/* The one node reading value v, or -1 (none, several, or a graph output). */
static int only_reader(const sb_graph *g, const readers *r, int v)
{
    if (v < 0 || g->values[v].is_output || r->count[v] != 1) return -1;
    return r->reader[v];
}

static const sb_tval *constant(const sb_graph *g, int v)
{
    return v >= 0 && g->values[v].kind == SB_V_CONST && g->values[v].konst.data
           ? &g->values[v].konst : NULL;
}

static int float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (int)u;
}

static int64_t with_param(int code, float param)
{
    return (int64_t)((uint64_t)code | (uint64_t)(uint32_t)float_bits(param) << 32);
}

/* A float attribute's value when it is one, else dflt. */
static float attr_float(const sb_onnx_node *p, const char *name, float dflt)
{
    const sb_onnx_attr *a = sb_onnx_find_attr(p, name);
    return a && a->type == SB_A_FLOAT ? a->f : dflt;
}

static int only_attrs(const sb_onnx_node *p, const char *a, const char *b)
{
    for (size_t i = 0; i < p->attr_count; ++i) {
        const char *name = p->attrs[i].name;
        if (!(a && strcmp(name, a) == 0) && !(b && strcmp(name, b) == 0)) return 0;
    }
    return 1;
}

/* A one-element float32 constant's value. */
static int scalar(const sb_graph *g, int v, float *out)
{
    const sb_tval *t = constant(g, v);
    if (!t || t->info.dtype != SB_DT_FLOAT || sb_vinfo_numel(&t->info) != 1) return 0;
    *out = *(const float *)t->data;
    return 1;
}

/* Whether node n (a Clip) clips to [0, 6], its bounds as attributes before
 * opset 11 and constant inputs from it. */
static int clips_to_0_6(const sb_graph *g, const sb_node *n, const sb_onnx_node *p)
{
    float lo, hi;
    if (g->opset < 11) {
        if (!only_attrs(p, "min", "max")) return 0;
        const sb_onnx_attr *a = sb_onnx_find_attr(p, "min"), *b = sb_onnx_find_attr(p, "max");
        if (!a || a->type != SB_A_FLOAT || !b || b->type != SB_A_FLOAT) return 0;
        lo = a->f, hi = b->f;
    } else if (p->attr_count || n->n_in != 3 || !scalar(g, n->in[1], &lo) || !scalar(g, n->in[2], &hi)) {
        return 0;
    }
    return lo == 0.0f && hi == 6.0f;
}

/* The activation equal to this node bit for bit, or 0. */
static int64_t activation_of(const sb_graph *g, const sb_node *n, const sb_onnx_node *p)
{
    const char *op = n->op_type;
    if (!strcmp(op, "Relu") && !p->attr_count) return SB_ACT_RELU;
    if (!strcmp(op, "Sigmoid") && !p->attr_count) return SB_ACT_SIGMOID;
    if (!strcmp(op, "Tanh") && !p->attr_count) return SB_ACT_TANH;
    if (!strcmp(op, "HardSwish") && !p->attr_count) return SB_ACT_HARDSWISH_ONNX;
    if (!strcmp(op, "HardSigmoid") && only_attrs(p, "alpha", "beta")) {
        float alpha = attr_float(p, "alpha", 0.2f), beta = attr_float(p, "beta", 0.5f);
        return beta == 0.5f ? with_param(SB_ACT_HARDSIGMOID_ONNX, alpha) : 0;
    }
    if (!strcmp(op, "LeakyRelu") && only_attrs(p, "alpha", NULL))
        return with_param(SB_ACT_LEAKY_RELU, attr_float(p, "alpha", 0.01f));
    if (!strcmp(op, "Clip")) return clips_to_0_6(g, n, p) ? SB_ACT_RELU6 : 0;
    return 0;
}

/* A Gemm that runs as one linear (constant B, alpha = beta = 1, no transA,
 * a constant 1-D C or none): its activation can be the epilogue. */
static int gemm_plain(const sb_graph *g, const sb_node *n, const sb_onnx_node *p)
{
    const sb_onnx_attr *a;
    if ((a = sb_onnx_find_attr(p, "alpha")) && (a->type != SB_A_FLOAT || a->f != 1.0f)) return 0;
    if ((a = sb_onnx_find_attr(p, "beta")) && (a->type != SB_A_FLOAT || a->f != 1.0f)) return 0;
    if ((a = sb_onnx_find_attr(p, "transA")) && a->type == SB_A_INT && a->i) return 0;
    const sb_tval *b = n->n_in > 1 ? constant(g, n->in[1]) : NULL;
    if (!b || b->info.dtype != SB_DT_FLOAT) return 0;
    if (n->n_in > 2 && n->in[2] >= 0) {
        const sb_tval *c = constant(g, n->in[2]);
        return c && c->info.dtype == SB_DT_FLOAT && c->info.rank == 1;
    }
    return 1;
}

/* Whether a BatchNormalization's attributes are those of its inference
 * form as the standalone operator reads them (reduce/batch_norm.c): epsilon,
 * momentum, spatial 1, training_mode 0, and opset 1-6's is_test and
 * consumed_inputs, which it ignores. Exporters such as paddle2onnx write
 * training_mode = 0 out. */
static int batch_norm_inference(const sb_onnx_node *p)
{
    for (size_t i = 0; i < p->attr_count; ++i) {
        const sb_onnx_attr *a = &p->attrs[i];
        if (!strcmp(a->name, "epsilon") || !strcmp(a->name, "momentum") ||
            !strcmp(a->name, "is_test") || !strcmp(a->name, "consumed_inputs"))
            continue;
        if (!strcmp(a->name, "spatial") && a->type == SB_A_INT && a->i == 1) continue;
        if (!strcmp(a->name, "training_mode") && a->type == SB_A_INT && a->i == 0) continue;
        return 0;
    }
    return 1;
}

/* Fast mode: Conv(W, B) then BatchNormalization as one Conv with new
 * constant weights (W * scale per output channel, scale = gamma /
 * sqrt(var + eps) in binary64 rounded to float32; bias (B - mean) * scale +
 * beta in binary64, rounded once). Returns 1 when done. */
static int fold_batch_norm(sb_graph *g, sb_node *conv, const sb_onnx_node *bn_proto, sb_node *bn)
{
    if (bn->n_in != 5 || bn->n_out < 1 || bn->out[0] < 0 || !batch_norm_inference(bn_proto)) return 0;
    for (int j = 1; j < bn->n_out; ++j) if (bn->out[j] >= 0) return 0;
    const sb_tval *s[4];
    for (int i = 0; i < 4; ++i) {
        s[i] = constant(g, bn->in[i + 1]);
        if (!s[i] || s[i]->info.dtype != SB_DT_FLOAT) return 0;
    }
    const sb_tval *w = conv->n_in > 1 ? constant(g, conv->in[1]) : NULL;
    if (!w || w->info.dtype != SB_DT_FLOAT || w->info.rank < 3 || sb_vinfo_numel(&w->info) <= 0)
        return 0;
    int64_t cout = w->info.dims[0], per = sb_vinfo_numel(&w->info) / cout;
    for (int i = 0; i < 4; ++i) if (sb_vinfo_numel(&s[i]->info) != cout) return 0;
    const float *bias = NULL;
    if (conv->n_in > 2 && conv->in[2] >= 0) {
        const sb_tval *b = constant(g, conv->in[2]);
        if (!b || b->info.dtype != SB_DT_FLOAT || sb_vinfo_numel(&b->info) != cout) return 0;
        bias = b->data;
    }
    double eps = attr_float(bn_proto, "epsilon", 1e-5f);
    const float *gamma = s[0]->data, *beta = s[1]->data, *mean = s[2]->data, *var = s[3]->data;
    float *new_w = sb_alloc_aligned((size_t)(cout * per) * 4);
    float *new_b = sb_alloc_aligned((size_t)cout * 4);
    if (!new_w || !new_b || sb_graph_keep_buffer(g, new_w) || sb_graph_keep_buffer(g, new_b)) return -1;
    for (int64_t c = 0; c < cout; ++c) {
        double scale = (double)gamma[c] / sqrt((double)var[c] + eps);
        float scale32 = (float)scale;
        const float *wc = (const float *)w->data + c * per;
        for (int64_t k = 0; k < per; ++k) new_w[c * per + k] = sb_bin_mul(wc[k], scale32);
        double b = bias ? (double)bias[c] : 0.0;
        new_b[c] = (float)((b - (double)mean[c]) * scale + (double)beta[c]);
    }
    /* two new constants, named after what they came from (making a value
     * may move g->values, into which w points: keep its info first) */
    sb_tval folded = *w;
    folded.data = new_w;
    char name[1024];
    snprintf(name, sizeof name, "%s::bn_folded:%s", g->values[conv->in[1]].name,
             g->values[bn->out[0]].name);
    int wv = sb_graph_new_value(g, name);
    snprintf(name, sizeof name, "%s::bn_folded_bias", g->values[bn->out[0]].name);
    int bv = sb_graph_new_value(g, name);
    if (wv < 0 || bv < 0) return -1;
    g->values[wv].kind = g->values[bv].kind = SB_V_CONST;
    g->values[wv].konst = folded;
    g->values[bv].konst.info.dtype = SB_DT_FLOAT;
    g->values[bv].konst.info.rank = 1;
    g->values[bv].konst.info.dims[0] = cout;
    g->values[bv].konst.data = new_b;
    if (conv->n_in < 3) {
        int *in = sb_arena_alloc(&g->arena, 3, sizeof(int));
        unsigned char *consumed = sb_arena_alloc(&g->arena, 3, 1);
        if (!in || !consumed) return -1;
        in[0] = conv->in[0];
        conv->in = in, conv->consumed = consumed, conv->n_in = 3;
    }
    conv->in[1] = wv, conv->in[2] = bv;
    conv->out = bn->out, conv->n_out = 1;
    return 1;
}

static int is(const sb_node *n, const char *op) { return n->op && strcmp(n->op_type, op) == 0; }

/* The pair exporters write for SiLU/Swish on value v: a Sigmoid of v and a
 * Mul of v and that Sigmoid (either order), the only two readers of v, the
 * Sigmoid's output read by the Mul alone, neither v nor it a graph output,
 * no attributes. Returns the Sigmoid's node and sets *mul, or -1. */
static int swish_pair(const sb_graph *g, const readers *r, const sb_onnx_node **protos, int v,
                      int *mul)
{
    if (v < 0 || g->values[v].is_output || r->count[v] != 2 || r->first[v] == r->reader[v])
        return -1;
    for (int pick = 0; pick < 2; ++pick) {
        const int s = pick ? r->reader[v] : r->first[v], m = pick ? r->first[v] : r->reader[v];
        const sb_node *sig = &g->nodes[s], *mn = &g->nodes[m];
        if (!is(sig, "Sigmoid") || !is(mn, "Mul") || protos[s]->attr_count || protos[m]->attr_count)
            continue;
        if (sig->n_in != 1 || sig->n_out != 1 || mn->n_in != 2 || mn->n_out != 1) continue;
        const int sv = sig->out[0];
        if (only_reader(g, r, sv) != m) continue;
        if (!((mn->in[0] == v && mn->in[1] == sv) || (mn->in[0] == sv && mn->in[1] == v))) continue;
        *mul = m;
        return s;
    }
    return -1;
}

/* The chain paddle2onnx writes for HardSwish on value v: Add(v, 3) ->
 * Clip(0, 6) -> Mul(v, clip) -> Div(mul, 6), either operand order of the
 * Add and the Mul; the Add and the Mul v's only readers, each link read by
 * the next alone, no attributes but the Clip's bounds, no graph outputs.
 * Its operations are torch's hardswish, (x * relu6(x + 3)) / 6, step for
 * step (x + 3 is never -0, so Clip and relu6 agree), which is
 * SB_ACT_HARDSWISH. Returns the Div's node and sets chain[] to the Add, Clip
 * and Mul, or -1. */
static int hardswish_chain(const sb_graph *g, const readers *r, const sb_onnx_node **protos,
                           int v, int chain[3])
{
    if (v < 0 || g->values[v].is_output || r->count[v] != 2 || r->first[v] == r->reader[v])
        return -1;
    const int a = r->first[v], m = r->reader[v];
    const sb_node *add = &g->nodes[a], *mul = &g->nodes[m];
    float k;
    if (!is(add, "Add") || !is(mul, "Mul") || protos[a]->attr_count || protos[m]->attr_count ||
        add->n_in != 2 || add->n_out != 1 || mul->n_in != 2 || mul->n_out != 1)
        return -1;
    const int three = add->in[0] == v ? add->in[1] : add->in[0];
    if (three == v || !scalar(g, three, &k) || k != 3.0f) return -1;
    const int c = only_reader(g, r, add->out[0]);
    if (c < 0 || !is(&g->nodes[c], "Clip") || g->nodes[c].n_out != 1 ||
        g->nodes[c].in[0] != add->out[0] || !clips_to_0_6(g, &g->nodes[c], protos[c]))
        return -1;
    const int clipped = g->nodes[c].out[0];
    if (only_reader(g, r, clipped) != m ||
        !((mul->in[0] == v && mul->in[1] == clipped) || (mul->in[0] == clipped && mul->in[1] == v)))
        return -1;
    const int d = only_reader(g, r, mul->out[0]);
    if (d < 0) return -1;
    const sb_node *div = &g->nodes[d];
    if (!is(div, "Div") || protos[d]->attr_count || div->n_in != 2 || div->n_out != 1 ||
        div->in[0] != mul->out[0] || !scalar(g, div->in[1], &k) || k != 6.0f)
        return -1;
    chain[0] = a, chain[1] = c, chain[2] = m;
    return d;
}

/* Both modes: a BatchNormalization (inference form, constant float32
 * statistics, one per output channel) that is the only reader of a Conv
 * with constant weights runs in the Conv's epilogue with the standalone
 * operator's steps (docs/exact-ops.md, "Normalization"): per channel
 * r = 1 / sqrt(var + eps) as sb_norm rounds it, then ((v - mean) * r) *
 * weight + bias on each output. The four values per channel become a new
 * (Cout, 4) constant. Returns 1 when done, 0 when the nodes do not fit, -1
 * when out of memory. */
static int absorb_batch_norm(sb_graph *g, sb_node *conv, const sb_onnx_node *bn_proto, sb_node *bn)
{
    if (bn->n_in != 5 || bn->n_out < 1 || bn->out[0] < 0 || bn->in[0] != conv->out[0] ||
        !batch_norm_inference(bn_proto))
        return 0;
    for (int j = 1; j < bn->n_out; ++j) if (bn->out[j] >= 0) return 0;
    const sb_tval *w = conv->n_in > 1 ? constant(g, conv->in[1]) : NULL;
    if (!w || w->info.dtype != SB_DT_FLOAT || w->info.rank < 3) return 0;
    const int64_t cout = w->info.dims[0];
    const float *s[4];   /* scale, B, mean, var */
    for (int i = 0; i < 4; ++i) {
        const sb_tval *t = constant(g, bn->in[i + 1]);
        if (!t || t->info.dtype != SB_DT_FLOAT || t->info.rank != 1 || t->info.dims[0] != cout)
            return 0;
        s[i] = t->data;
    }
    if (cout < 1) return 0;
    const float eps = attr_float(bn_proto, "epsilon", 1e-5f);
    float *steps = sb_alloc_aligned((size_t)cout * 4 * sizeof(float));
    if (!steps || sb_graph_keep_buffer(g, steps)) return -1;
    for (int64_t c = 0; c < cout; ++c) {
        steps[4 * c] = s[2][c];                                     /* mean */
        steps[4 * c + 1] = 1.0f / __builtin_sqrtf(s[3][c] + eps);   /* r, as sb_norm */
        steps[4 * c + 2] = s[0][c];                                 /* weight */
        steps[4 * c + 3] = s[1][c];                                 /* bias */
    }
    char name[1024];
    snprintf(name, sizeof name, "%s::batch_norm_steps", g->values[bn->out[0]].name);
    int v = sb_graph_new_value(g, name);
    if (v < 0) return -1;
    g->values[v].kind = SB_V_CONST;
    g->values[v].konst.info.dtype = SB_DT_FLOAT;
    g->values[v].konst.info.rank = 2;
    g->values[v].konst.info.dims[0] = cout;
    g->values[v].konst.info.dims[1] = 4;
    g->values[v].konst.data = steps;
    conv->fused_affine = v;
    conv->out = bn->out, conv->n_out = 1;
    return 1;
}

/* Both modes: an Add (no attributes) that is the only reader of a Conv's
 * output and whose other operand is computed (a residual) is the Conv's
 * epilogue's one rounded add (a + b is b + a, and both give the NaN made
 * canonical). The operand becomes the Conv's last input, and the Conv
 * moves to the Add's place in the run order: its own inputs come earlier,
 * the residual may not. Nodes k and j; 1 when done, 0 when the nodes do
 * not fit, -1 when out of memory. */
static int absorb_residual(sb_graph *g, const sb_onnx_node **protos, int k, int j)
{
    sb_node *conv = &g->nodes[k], *add = &g->nodes[j];
    if (add->n_in != 2 || add->n_out != 1 || protos[j]->attr_count || add->in[0] == add->in[1])
        return 0;
    const int other = add->in[0] == conv->out[0] ? add->in[1] : add->in[0];
    if (other < 0 || g->values[other].kind == SB_V_CONST) return 0;   /* (with data or not) */
    const int n_in = (conv->n_in < 3 ? 3 : conv->n_in) + 1;
    int *in = sb_arena_alloc(&g->arena, (size_t)n_in, sizeof(int));
    unsigned char *consumed = sb_arena_alloc(&g->arena, (size_t)n_in, 1);
    if (!in || !consumed) return -1;
    for (int i = 0; i < n_in - 1; ++i) {
        in[i] = i < conv->n_in ? conv->in[i] : -1;
        consumed[i] = i < conv->n_in ? conv->consumed[i] : 0;
    }
    in[n_in - 1] = other, consumed[n_in - 1] = 0;
    conv->in = in, conv->consumed = consumed, conv->n_in = n_in;
    conv->fused_residual = n_in - 1;
    conv->out = add->out, conv->n_out = 1;
    g->nodes[j] = *conv;
    protos[j] = protos[k];
    g->nodes[k].op = NULL;
    return 1;
}

int sb_graph_fuse(sb_graph *g, const sb_onnx_node **protos)
{
    readers r;
    int status;
    if (g->mode == SB_MODE_FAST) {
        if ((status = count_readers(g, &r))) { free_readers(&r); return status; }
        for (int k = 0; k < g->n_nodes; ++k) {
            sb_node *n = &g->nodes[k];
            if (!is(n, "Conv") || n->n_out < 1) continue;
            int j = only_reader(g, &r, n->out[0]);
            if (j < 0 || !is(&g->nodes[j], "BatchNormalization")) continue;
            int done = fold_batch_norm(g, n, protos[j], &g->nodes[j]);
            if (done < 0) { free_readers(&r); return sb_fail(SB_ERR_NO_MEMORY, "out of memory"); }
            if (done) g->nodes[j].op = NULL;
        }
        free_readers(&r);
    }
    /* a Conv's BatchNormalization and residual Add */
    if ((status = count_readers(g, &r))) { free_readers(&r); return status; }
    for (int k = 0; k < g->n_nodes; ++k) {
        sb_node *n = &g->nodes[k];
        if (!is(n, "Conv") || n->n_out < 1 || n->fused_residual >= 0) continue;
        int j = only_reader(g, &r, n->out[0]), done = 0;
        if (j >= 0 && n->fused_affine < 0 && is(&g->nodes[j], "BatchNormalization") &&
            (done = absorb_batch_norm(g, n, protos[j], &g->nodes[j])) > 0) {
            g->nodes[j].op = NULL;
            j = only_reader(g, &r, n->out[0]);
        }
        if (done >= 0 && j >= 0 && is(&g->nodes[j], "Add")) {
            done = absorb_residual(g, protos, k, j);
        }
        if (done < 0) { free_readers(&r); return sb_fail(SB_ERR_NO_MEMORY, "out of memory"); }
    }
    free_readers(&r);
    if ((status = count_readers(g, &r))) { free_readers(&r); return status; }
    for (int k = 0; k < g->n_nodes; ++k) {
        sb_node *n = &g->nodes[k];
        if (!(is(n, "Conv") || is(n, "Gemm") || is(n, "MatMul")) || n->n_out < 1) continue;
        int j = only_reader(g, &r, n->out[0]);
        sb_node *user = j >= 0 ? &g->nodes[j] : NULL;
        const sb_tval *w = n->n_in > 1 ? constant(g, n->in[1]) : NULL;
        int packed_w = w && w->info.dtype == SB_DT_FLOAT && (!is(n, "MatMul") ||
                       (w->info.rank == 2 && sb_vinfo_numel(&w->info) > 0));
        /* MatMul with packed weights, then Add of a constant 1-D bias */
        if (user && is(n, "MatMul") && is(user, "Add") && n->fused_bias < 0 && user->n_in == 2 &&
            !protos[j]->attr_count && packed_w && w->info.rank == 2) {
            int other = user->in[0] == n->out[0] ? user->in[1] : user->in[0];
            int twice = user->in[0] == n->out[0] && user->in[1] == n->out[0];
            const sb_tval *b = constant(g, other);
            if (!twice && b && b->info.dtype == SB_DT_FLOAT && b->info.rank == 1 &&
                b->info.dims[0] == w->info.dims[1]) {
                n->fused_bias = other;
                n->out = user->out, n->n_out = user->n_out;
                user->op = NULL;
                j = only_reader(g, &r, n->out[0]);
                user = j >= 0 ? &g->nodes[j] : NULL;
            }
        }
        int64_t act = user ? activation_of(g, user, protos[j]) : 0;
        int absorbed[3] = {-1, -1, -1};    /* nodes before `user` the activation takes */
        if (!act && (absorbed[0] = swish_pair(g, &r, protos, n->out[0], &j)) >= 0) {
            act = SB_ACT_SWISH_ONNX;
            user = &g->nodes[j];
        } else if (!act && (j = hardswish_chain(g, &r, protos, n->out[0], absorbed)) >= 0) {
            act = SB_ACT_HARDSWISH;
            user = &g->nodes[j];
        }
        if (!act) continue;
        if (is(n, "Gemm") && !gemm_plain(g, n, protos[k])) continue;
        if (is(n, "MatMul") && !packed_w) continue;
        n->activation = act;
        n->out = user->out, n->n_out = user->n_out;
        user->op = NULL;
        for (int i = 0; i < 3; ++i)
            if (absorbed[i] >= 0) g->nodes[absorbed[i]].op = NULL;
    }
    free_readers(&r);
    return SB_OK;
}
