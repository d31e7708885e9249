/* float16 and bfloat16 values of a model (narrow.h): which values ONNX
 * types as a narrow float, and a rounding node after every node that
 * computes one, so that each result is rounded to its type once. */
#include <stdlib.h>
#include <string.h>
#include "graph/error.h"
#include "graph/narrow.h"

/* Ops whose outputs are integers or bool whatever their inputs. */
static const char *const INTEGER_OUT[] = {
    "Shape", "Size", "NonZero", "ArgMax", "ArgMin", "Equal", "Less", "Greater", "LessOrEqual",
    "GreaterOrEqual", "IsNaN", "IsInf", "Not", "And", "Or", "Xor", NULL};

/* Ops whose float outputs are some of their inputs' values (or computed in
 * the narrow type by their own subgraphs, or rounded by the op itself):
 * nothing to round. */
static const char *const VALUE_PRESERVING[] = {
    "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Gather",
    "GatherElements", "GatherND", "Concat", "Split", "Expand", "Tile", "Pad", "Neg", "Abs", "Relu",
    "Max", "Min", "Where", "Dropout", "DepthToSpace", "SpaceToDepth", "ReverseSequence", "Compress",
    "Unique", "TopK", "Trilu", "MaxPool", "GlobalMaxPool", "ReduceMax", "ReduceMin", "Clip", "Cast",
    "If", "Loop", "Scan", "Constant", "ConstantOfShape", "Sign", NULL};

static int listed(const char *op, const char *const *list)
{
    for (; *list; ++list)
        if (!strcmp(op, *list)) return 1;
    return 0;
}

static int narrow_code(int64_t t) { return t == SB_DT_FLOAT16 || t == SB_DT_BFLOAT16 ? (int)t : 0; }

/* The narrow type of node p's outputs from its inputs' (0: none). */
static int node_narrow(const sb_onnx_node *p, const sb_node *n, const unsigned char *narrow)
{
    if (listed(p->op_type, INTEGER_OUT)) return 0;
    if (!strcmp(p->op_type, "Cast")) {
        const sb_onnx_attr *to = sb_onnx_find_attr(p, "to");
        return to ? narrow_code(to->i) : 0;
    }
    if (!strcmp(p->op_type, "CastLike")) return n->n_in > 1 && n->in[1] >= 0 ? narrow[n->in[1]] : 0;
    if (!strcmp(p->op_type, "Constant") || !strcmp(p->op_type, "ConstantOfShape")) {
        const sb_onnx_attr *v = sb_onnx_find_attr(p, "value");
        return v && v->t ? narrow_code(v->t->data_type) : 0;
    }
    for (int i = 0; i < n->n_in; ++i)
        if (n->in[i] >= 0 && narrow[n->in[i]]) return narrow[n->in[i]];
    return 0;
}

static const sb_onnx_node ROUND_PROTO[2] = {
    {.op_type = "SbRoundFloat16", .domain = "", .name = ""},
    {.op_type = "SbRoundBFloat16", .domain = "", .name = ""},
};

int sb_narrow_insert(sb_graph *g, const unsigned char *seed, sb_node **nodes,
                     const sb_onnx_node ***protos, int *count, unsigned char **narrow_out)
{
    *narrow_out = NULL;
    int n = *count;
    size_t cap = (size_t)g->n_values + 1;
    unsigned char *narrow = calloc(cap, 1);
    if (!narrow) return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    memcpy(narrow, seed, (size_t)g->n_values);
    /* to a fixed point (files are sorted, so one pass nearly always does) */
    for (int changed = 1, pass = 0; changed && pass < n + 1; ++pass) {
        changed = 0;
        for (int k = 0; k < n; ++k) {
            int kind = node_narrow((*protos)[k], &(*nodes)[k], narrow);
            for (int j = 0; kind && j < (*nodes)[k].n_out; ++j) {
                int v = (*nodes)[k].out[j];
                if (v >= 0 && narrow[v] != kind) narrow[v] = (unsigned char)kind, changed = 1;
            }
        }
    }
    int any = 0;
    for (int v = 0; v < g->n_values && !any; ++v) any = narrow[v];
    if (!any) {
        *narrow_out = narrow;
        return SB_OK;
    }
    /* a rounding node after each output computed in float32 */
    int extra = 0;
    for (int k = 0; k < n; ++k) {
        if (listed((*protos)[k]->op_type, VALUE_PRESERVING)) continue;
        for (int j = 0; j < (*nodes)[k].n_out; ++j) {
            int v = (*nodes)[k].out[j];
            extra += v >= 0 && narrow[v];
        }
    }
    sb_node *all = realloc(*nodes, (size_t)(n + extra + 1) * sizeof *all);
    if (all) *nodes = all;
    const sb_onnx_node **ps = all ? realloc(*protos, (size_t)(n + extra + 1) * sizeof *ps) : NULL;
    if (ps) *protos = ps;
    if (!all || !ps) {
        free(narrow);
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    }
    int at = n;
    for (int k = 0; k < n; ++k) {
        if (listed(ps[k]->op_type, VALUE_PRESERVING)) continue;
        for (int j = 0; j < all[k].n_out; ++j) {
            int v = all[k].out[j];
            if (v < 0 || !narrow[v]) continue;
            /* node k writes a new value; the rounding node writes v */
            size_t len = strlen(g->values[v].name);
            char *raw = malloc(len + 24);
            if (!raw) {
                free(narrow);
                return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
            }
            memcpy(raw, g->values[v].name, len);
            memcpy(raw + len, "\x01samebits-float32", 18);
            int r = sb_graph_value(g, raw, 1);
            free(raw);
            if (r < 0) {
                free(narrow);
                return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
            }
            if ((size_t)r >= cap) {   /* the values grew */
                size_t grown = cap * 2 > (size_t)r + 1 ? cap * 2 : (size_t)r + 1;
                unsigned char *more = realloc(narrow, grown);
                if (!more) {
                    free(narrow);
                    return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
                }
                memset(more + cap, 0, grown - cap);
                narrow = more, cap = grown;
            }
            all[k].out[j] = r;
            sb_node *round = &all[at];
            memset(round, 0, sizeof *round);
            round->index = all[k].index;
            round->name = all[k].name;
            int bf = narrow[v] == SB_DT_BFLOAT16;
            round->op_type = ROUND_PROTO[bf].op_type;
            round->op = bf ? &sb_op_round_bfloat16 : &sb_op_round_float16;
            round->n_in = 1, round->n_out = 1;
            round->in = sb_arena_alloc(&g->arena, 1, sizeof(int));
            round->out = sb_arena_alloc(&g->arena, 1, sizeof(int));
            round->consumed = sb_arena_alloc(&g->arena, 1, 1);
            if (!round->in || !round->out || !round->consumed) {
                free(narrow);
                return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
            }
            round->in[0] = r, round->out[0] = v, round->consumed[0] = 0;
            round->fused_bias = round->fused_affine = round->fused_residual = -1;
            ps[at] = &ROUND_PROTO[bf];
            ++at;
        }
    }
    *count = at;
    *narrow_out = narrow;
    return SB_OK;
}
