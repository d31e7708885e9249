/* The readers and error helpers an operator's load, infer and run use (op.h). */
#include <stdio.h>
#include <string.h>
#include "graph/error.h"
#include "framework/memory.h"
#include "graph/graph.h"
#include "graph/op.h"

static const char *const KIND_NAMES[] = {
    "undefined", "float", "int", "string", "tensor", "graph", "floats", "ints", "strings",
    "tensors", "graphs", "sparse tensor", "sparse tensors", "type proto", "type protos",
};

static const char *kind_name(int kind)
{
    return kind >= 0 && kind <= SB_A_TYPE_PROTOS ? KIND_NAMES[kind] : "unknown";
}

void sb_node_where(const sb_node *node, char *buf, size_t size)
{
    if (node->name && node->name[0])
        snprintf(buf, size, "node %d '%s' (%s)", node->index, node->name, node->op_type);
    else
        snprintf(buf, size, "node %d (%s)", node->index, node->op_type);
}

int sb_check_inferred_outputs(const sb_node *node, const sb_vinfo *infos)
{
    for (int j = 0; j < node->n_out; ++j) {
        if (node->out[j] < 0 || infos[j].dtype != SB_DT_UNDEFINED) continue;
        char where[512];
        sb_node_where(node, where, sizeof where);
        return sb_fail(SB_ERR_VALUE, "%s: the node names %d outputs; the operator has no output %d",
                       where, node->n_out, j);
    }
    return SB_OK;
}

static int node_vfail(const sb_node *node, int status, const char *fmt, va_list ap)
{
    char where[512], text[768];
    sb_node_where(node, where, sizeof where);
    vsnprintf(text, sizeof text, fmt, ap);
    return sb_fail(status, "%s: %s", where, text);
}

int sb_load_fail(sb_load_ctx *L, int status, const char *fmt, ...)
{
    if (L->status) return L->status;   /* the first error is the one reported */
    va_list ap;
    va_start(ap, fmt);
    node_vfail(L->node, status, fmt, ap);
    va_end(ap);
    L->status = status;
    return status;
}

int sb_infer_fail(sb_infer_ctx *I, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    node_vfail(I->node, status, fmt, ap);
    va_end(ap);
    return status;
}

int sb_run_fail(sb_run_ctx *R, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    node_vfail(R->node, status, fmt, ap);
    va_end(ap);
    return status;
}

int sb_eval_fail(sb_eval_ctx *E, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    node_vfail(E->node, status, fmt, ap);
    va_end(ap);
    return status;
}

/* ---- attributes ------------------------------------------------------------ */

static const sb_onnx_attr *find(sb_load_ctx *L, const char *name)
{
    const sb_onnx_attr *found = NULL;
    for (size_t i = 0; i < L->proto->attr_count; ++i) {
        if (strcmp(L->proto->attrs[i].name, name) == 0) {
            L->used[i] = 1;
            found = &L->proto->attrs[i];
        }
    }
    return found;
}

static const sb_onnx_attr *typed(sb_load_ctx *L, const char *name, int kind)
{
    const sb_onnx_attr *a = find(L, name);
    if (a && a->type != kind) {
        sb_load_fail(L, SB_ERR_UNSUPPORTED, "attribute '%s' has type %s, expected %s", name,
                     kind_name(a->type), kind_name(kind));
        return NULL;
    }
    return a;
}

const sb_onnx_graph *sb_attr_graph(sb_load_ctx *L, const char *name)
{
    const sb_onnx_attr *a = typed(L, name, SB_A_GRAPH);
    if (!a && !L->status) sb_load_fail(L, SB_ERR_UNSUPPORTED, "attribute '%s' is required", name);
    return a ? a->g : NULL;
}

int sb_has_attr(sb_load_ctx *L, const char *name)
{
    for (size_t i = 0; i < L->proto->attr_count; ++i)
        if (strcmp(L->proto->attrs[i].name, name) == 0) return 1;
    return 0;
}

int64_t sb_attr_int(sb_load_ctx *L, const char *name, int64_t dflt)
{
    const sb_onnx_attr *a = typed(L, name, SB_A_INT);
    return a ? a->i : dflt;
}

int64_t sb_attr_int_req(sb_load_ctx *L, const char *name)
{
    if (!sb_has_attr(L, name)) {
        sb_load_fail(L, SB_ERR_UNSUPPORTED, "attribute '%s' is required", name);
        return 0;
    }
    return sb_attr_int(L, name, 0);
}

float sb_attr_float(sb_load_ctx *L, const char *name, float dflt)
{
    const sb_onnx_attr *a = typed(L, name, SB_A_FLOAT);
    return a ? a->f : dflt;
}

const char *sb_attr_str(sb_load_ctx *L, const char *name, const char *dflt)
{
    const sb_onnx_attr *a = typed(L, name, SB_A_STRING);
    if (!a) return dflt;
    char *s = sb_arena_strdup(&L->graph->arena, (const char *)a->s.data, a->s.size);
    if (!s) {
        sb_load_fail(L, SB_ERR_NO_MEMORY, "out of memory");
        return dflt;
    }
    return s;
}

int sb_attr_ints(sb_load_ctx *L, const char *name, const int64_t **v, size_t *n)
{
    const sb_onnx_attr *a = typed(L, name, SB_A_INTS);
    if (!a) return 0;
    *v = a->ints.v, *n = a->ints.n;
    return 1;
}

int sb_attr_floats(sb_load_ctx *L, const char *name, const float **v, size_t *n)
{
    const sb_onnx_attr *a = typed(L, name, SB_A_FLOATS);
    if (!a) return 0;
    *v = a->floats.v, *n = a->floats.n;
    return 1;
}

int sb_attr_strings(sb_load_ctx *L, const char *name, const sb_bytes **v, size_t *n)
{
    const sb_onnx_attr *a = typed(L, name, SB_A_STRINGS);
    if (!a) return 0;
    *v = a->strings, *n = a->strings_count;
    return 1;
}

int sb_attr_tensor(sb_load_ctx *L, const char *name, sb_tval *out)
{
    const sb_onnx_attr *a = typed(L, name, SB_A_TENSOR);
    if (!a) return 0;
    char where[512], what[640];
    sb_node_where(L->node, where, sizeof where);
    snprintf(what, sizeof what, "%s: attribute '%s'", where, name);
    int status = sb_tensor_from_proto(L->graph, a->t, NULL, what, out);
    if (status) {
        if (!L->status) L->status = status;
        return 0;
    }
    return 1;
}

void sb_attr_ignore(sb_load_ctx *L, const char *name) { (void)find(L, name); }

/* ---- inputs at load ------------------------------------------------------------ */

int sb_load_has_input(const sb_load_ctx *L, int i)
{
    return i >= 0 && i < L->node->n_in && L->node->in[i] >= 0;
}

const sb_tval *sb_load_const(const sb_load_ctx *L, int i)
{
    return sb_load_has_input(L, i) ? sb_load_const_value(L, L->node->in[i]) : NULL;
}

const sb_tval *sb_load_const_value(const sb_load_ctx *L, int value)
{
    if (value < 0 || value >= L->graph->n_values) return NULL;
    const sb_value *v = &L->graph->values[value];
    return v->kind == SB_V_CONST ? &v->konst : NULL;
}

void sb_load_consume(sb_load_ctx *L, int i)
{
    if (sb_load_has_input(L, i)) L->node->consumed[i] = 1;
}

void *sb_load_state(sb_load_ctx *L, size_t bytes)
{
    void *p = sb_arena_alloc(&L->graph->arena, 1, bytes);
    if (!p) sb_load_fail(L, SB_ERR_NO_MEMORY, "out of memory for the node's state");
    L->node->state = p;
    return p;
}

void *sb_load_buffer(sb_load_ctx *L, size_t bytes)
{
    void *p = sb_alloc_aligned(bytes);
    if (!p || sb_graph_keep_buffer(L->graph, p)) {
        sb_free_aligned(p);
        sb_load_fail(L, SB_ERR_NO_MEMORY, "out of memory for %zu bytes of prepared weights", bytes);
        return NULL;
    }
    return p;
}

int sb_load_only_first_output(sb_load_ctx *L, const char *what)
{
    for (int j = 1; j < L->node->n_out; ++j)
        if (L->node->out[j] >= 0)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "output '%s' (%s) is not supported",
                                L->proto->outputs[j], what);
    return SB_OK;
}

/* ---- inputs at plan and run time --------------------------------------------------- */

void sb_infer_from_run(const sb_run_ctx *R, sb_infer_ctx *I, sb_vinfo *outs)
{
    memset(I, 0, sizeof *I);
    I->node = R->node, I->state = R->state, I->mode = R->mode, I->path = R->path;
    I->n_in = R->n_in, I->n_out = R->n_out, I->in = R->in, I->out = outs, I->inplace = -1;
}

const sb_tval *sb_infer_input(sb_infer_ctx *I, int i, const char *what)
{
    if (i >= I->n_in || !I->in[i]) {
        sb_infer_fail(I, SB_ERR_VALUE, "a required input is missing (input %d, %s)", i, what);
        return NULL;
    }
    return I->in[i];
}

const sb_tval *sb_infer_float(sb_infer_ctx *I, int i, const char *what)
{
    const sb_tval *t = sb_infer_input(I, i, what);
    if (t && t->info.dtype != SB_DT_FLOAT) {
        sb_infer_fail(I, SB_ERR_TYPE, "input %s must be float32, got %s", what,
                      sb_dtype_name(t->info.dtype));
        return NULL;
    }
    return t;
}

const sb_tval *sb_infer_int(sb_infer_ctx *I, int i, const char *what)
{
    const sb_tval *t = sb_infer_input(I, i, what);
    if (t && !sb_dtype_is_int(t->info.dtype)) {
        sb_infer_fail(I, SB_ERR_TYPE, "input %s must be an integer tensor, got %s", what,
                      sb_dtype_name(t->info.dtype));
        return NULL;
    }
    return t;
}

int sb_infer_int_list(sb_infer_ctx *I, int i, const char *what, int64_t *v, size_t cap, size_t *n)
{
    if (!sb_infer_input(I, i, what)) return SB_ERR_VALUE;
    const sb_tval *t = sb_infer_int(I, i, what);
    if (!t) return SB_ERR_TYPE;
    if (t->info.rank > 1) {
        char shape[128];
        sb_shape_text(&t->info, shape, sizeof shape);
        return sb_infer_fail(I, SB_ERR_VALUE, "input %s must be 1-D, got shape %s", what, shape);
    }
    int64_t count = sb_vinfo_numel(&t->info);
    if (count < 0 || (uint64_t)count > cap)
        return sb_infer_fail(I, SB_ERR_VALUE, "input %s has %lld values, at most %zu are supported",
                             what, (long long)count, cap);
    if (count && !t->data) return SB_NEEDS_VALUES;
    for (int64_t k = 0; k < count; ++k) {
        v[k] = sb_int_at(t, k);
        if (t->info.dtype == SB_DT_UINT64 && v[k] < 0) v[k] = INT64_MAX;   /* beyond int64: saturated */
    }
    *n = (size_t)count;
    return SB_OK;
}

int sb_infer_axis(sb_infer_ctx *I, int64_t axis, int rank, const char *what, int *out)
{
    int hi = rank > 1 ? rank : 1;
    if (axis < -rank || axis >= hi)
        return sb_infer_fail(I, SB_ERR_VALUE, "%s %lld is out of range for rank %d", what,
                             (long long)axis, rank);
    *out = rank ? (int)((axis + rank) % rank) : 0;
    return SB_OK;
}
