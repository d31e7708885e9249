/* ONNX Loop (docs/onnx.md): runs body while the iteration count is below M
 * (when given) and cond is true (when given: the input's, then each
 * iteration's body output; without a cond input the body's is ignored), carrying N values from one
 * iteration to the next; its outputs are the N final values and K scan
 * outputs, each the iterations' values of one body output stacked along a
 * new first axis. The body's inputs: the iteration number (int64 scalar),
 * cond (bool scalar) and the N carried values; its outputs: cond, the N
 * carried values and the K scanned ones. */
#include <stdlib.h>
#include "graph/ops/control/control_util.h"

typedef struct {
    sb_subgraph *body;
    int n_carried, n_scan;
} loop_state;

static int loop_load(sb_load_ctx *L)
{
    int explicit_in = L->node->n_in - L->node->n_implicit;
    if (explicit_in < 2)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "Loop has inputs M, cond and the carried values; "
                            "the node has %d", explicit_in);
    loop_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    /* ONNX's Loop without M and cond never ends: refused, never a hang */
    if (L->node->in[0] < 0 && L->node->in[1] < 0)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "a Loop with neither M nor cond never ends");
    s->n_carried = explicit_in - 2;
    int status = sb_subgraph_load(L, "body", 2 + s->n_carried, &s->body);
    if (status) return status;
    s->n_scan = sb_subgraph_outputs(s->body) - 1 - s->n_carried;
    if (s->n_scan < 0 || L->node->n_out != s->n_carried + s->n_scan)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "the body has %d outputs and the node %d for %d "
                            "carried values (the body's are cond, the carried and the scanned "
                            "values; the node's the carried and the scanned)",
                            sb_subgraph_outputs(s->body), L->node->n_out, s->n_carried);
    return SB_OK;
}

/* The iterations' values of one scanned output. */
typedef struct {
    void **parts;
    int64_t count, cap;
    sb_vinfo info;               /* each part's */
} scan_parts;

static int parts_add(sb_eval_ctx *E, scan_parts *p, int k, sb_tval *t)
{
    if (p->count == 0) {
        p->info = t->info;
    } else {
        int same = p->info.dtype == t->info.dtype && p->info.rank == t->info.rank;
        for (int d = 0; same && d < t->info.rank; ++d) same = p->info.dims[d] == t->info.dims[d];
        if (!same)
            return sb_eval_fail(E, SB_ERR_VALUE, "scan output %d changes type or shape between "
                                "iterations", k);
    }
    if (p->info.rank + 1 > SB_MAX_RANK)
        return sb_eval_fail(E, SB_ERR_UNSUPPORTED, "scan output %d would have more than %d "
                            "dimensions", k, SB_MAX_RANK);
    if (p->count == p->cap) {
        int64_t cap = p->cap ? p->cap * 2 : 16;
        void **grown = realloc(p->parts, (size_t)cap * sizeof *grown);
        if (!grown) return sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory");
        p->parts = grown, p->cap = cap;
    }
    p->parts[p->count++] = t->data;
    t->data = NULL;
    return SB_OK;
}

/* The parts stacked along a new first axis (the declared shape, with
 * unknown dimensions 0, when there were no iterations). */
static int parts_stack(sb_eval_ctx *E, const loop_state *s, int k, const scan_parts *p, sb_tval *out)
{
    memset(out, 0, sizeof *out);
    if (p->count == 0) {
        int dtype, rank;
        int64_t dims[SB_MAX_RANK];
        sb_subgraph_output_decl(s->body, 1 + s->n_carried + k, &dtype, &rank, dims);
        out->info.dtype = dtype ? dtype : SB_DT_FLOAT;
        out->info.rank = rank >= 0 && rank < SB_MAX_RANK ? rank + 1 : 1;
        for (int d = 1; d < out->info.rank; ++d) out->info.dims[d] = dims[d - 1] > 0 ? dims[d - 1] : 0;
        if (!sb_dtype_size(out->info.dtype)) out->info.dtype = SB_DT_FLOAT;
    } else {
        out->info.dtype = p->info.dtype, out->info.rank = p->info.rank + 1;
        out->info.dims[0] = p->count;
        for (int d = 0; d < p->info.rank; ++d) out->info.dims[d + 1] = p->info.dims[d];
    }
    int64_t part = sb_vinfo_bytes(&p->info), bytes = sb_vinfo_bytes(&out->info);
    if (bytes < 0) return sb_eval_fail(E, SB_ERR_VALUE, "scan output %d is too large", k);
    out->data = sb_alloc_aligned((size_t)(bytes > 0 ? bytes : 1));
    if (!out->data) return sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory for %lld bytes",
                                        (long long)bytes);
    for (int64_t i = 0; i < p->count && part > 0; ++i)
        memcpy((char *)out->data + i * part, p->parts[i], (size_t)part);
    return SB_OK;
}

static int loop_eval(sb_eval_ctx *E)
{
    const loop_state *s = E->state;
    int N = s->n_carried, K = s->n_scan, n_body = 1 + N + K;
    const sb_tval *m = E->in[0], *cond0 = E->n_in - E->node->n_implicit > 1 ? E->in[1] : NULL;
    int64_t trips = -1;   /* -1: no limit */
    if (m) {
        if (!sb_dtype_is_int(m->info.dtype) || sb_vinfo_numel(&m->info) != 1)
            return sb_eval_fail(E, SB_ERR_VALUE, "M must be one integer");
        trips = sb_int_at(m, 0);
        if (trips < 0) trips = 0;
    }
    int cond = 1;
    if (cond0 && (cond = control_truth(E, cond0, "cond")) < 0) return SB_ERR_VALUE;
    sb_tval *carried = calloc((size_t)N + 1, sizeof *carried);        /* owned once iterated */
    sb_tval *outs = calloc((size_t)n_body, sizeof *outs);
    const sb_tval **in = calloc((size_t)(2 + N), sizeof *in);
    scan_parts *parts = calloc((size_t)K + 1, sizeof *parts);
    int status = SB_OK, owned = 0;
    if (!carried || !outs || !in || !parts) {
        status = sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    for (int i = 0; i < N; ++i) {
        if (!E->in[2 + i]) {
            status = sb_eval_fail(E, SB_ERR_VALUE, "carried value %d has no initial value", i);
            goto done;
        }
        carried[i] = *E->in[2 + i];
    }
    int64_t iteration = 0;
    uint8_t cond_in = 1;
    sb_tval t_iter = {{0}, &iteration}, t_cond = {{0}, &cond_in};
    t_iter.info.dtype = SB_DT_INT64, t_iter.info.rank = 0;
    t_cond.info.dtype = SB_DT_BOOL, t_cond.info.rank = 0;
    for (; (trips < 0 || iteration < trips) && cond; ++iteration) {
        cond_in = (uint8_t)cond;
        in[0] = &t_iter, in[1] = &t_cond;
        for (int i = 0; i < N; ++i) in[2 + i] = &carried[i];
        if ((status = sb_subgraph_run(s->body, E, in, outs))) goto done;
        int next = control_truth(E, &outs[0], "the body's cond output");
        control_release(outs, 1);
        if (next < 0) {
            status = SB_ERR_VALUE;
            control_release(outs + 1, N + K);
            goto done;
        }
        if (cond0) cond = next;   /* without a cond input the body's is ignored */
        if (owned) control_release(carried, N);
        for (int i = 0; i < N; ++i) carried[i] = outs[1 + i], outs[1 + i].data = NULL;
        owned = 1;
        for (int k = 0; k < K && !status; ++k) status = parts_add(E, &parts[k], k, &outs[1 + N + k]);
        control_release(outs + 1 + N, K);
        if (status) goto done;
    }
    for (int i = 0; i < N && !status; ++i) {
        sb_tval final = carried[i];
        if (!owned && (status = control_copy(E, &carried[i], &final))) break;
        carried[i].data = NULL;   /* now the output's (or a copy was made) */
        status = control_give(E, i, &final);
    }
    for (int k = 0; k < K && !status; ++k) {
        sb_tval stacked;
        if ((status = parts_stack(E, s, k, &parts[k], &stacked))) break;
        status = control_give(E, N + k, &stacked);
    }
done:
    if (owned && carried) control_release(carried, N);
    for (int k = 0; parts && k < K; ++k) {
        for (int64_t i = 0; i < parts[k].count; ++i) sb_free_aligned(parts[k].parts[i]);
        free(parts[k].parts);
    }
    free(parts);
    free(carried);
    free(outs);
    free(in);
    return status;
}

const sb_op_def sb_op_Loop = {
    .name = "Loop", .load = loop_load, .infer = control_infer, .eval = loop_eval,
    .flags = SB_OP_NO_FOLD};
