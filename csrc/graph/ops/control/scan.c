/* ONNX Scan (docs/onnx.md): runs body once per slice of the M scan inputs
 * along their scan axes (reversed where a direction is 1), carrying N state
 * values from one step to the next; its outputs are the N final states and
 * K scan outputs, each the steps' values of one body output stacked along
 * its output axis (in reverse step order where its direction is 1).
 * The body's inputs: the N states and the M slices; its outputs: the N
 * states and the K scanned values.
 *
 * Opset 8's form has a batch axis first on every input and output, an
 * optional sequence_lens input first (accepted only when every length is
 * the full one) and `directions` for the scan inputs; its scan axis is the
 * one after the batch. Each batch entry is one opset-9 scan. */
#include <stdlib.h>
#include "graph/graph.h"
#include "graph/ops/control/control_util.h"

typedef struct {
    sb_subgraph *body;
    int n_state, n_scan_in, n_scan_out;
    int batched;                 /* opset 8 */
    int64_t *in_axes, *in_dirs, *out_axes, *out_dirs;
} scan_state;

/* An ints attribute of `count` entries (zeros when absent, or when name is
 * null) into the arena. */
static int64_t *ints_or_zeros(sb_load_ctx *L, const char *name, int count, int check_01)
{
    int64_t *out = sb_arena_alloc(&L->graph->arena, (size_t)count + 1, sizeof *out);
    if (!out) return sb_load_fail(L, SB_ERR_NO_MEMORY, "out of memory"), NULL;
    memset(out, 0, ((size_t)count + 1) * sizeof *out);
    const int64_t *v;
    size_t n;
    if (!name || !sb_attr_ints(L, name, &v, &n)) return out;
    if (n != (size_t)count)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%s has %zu entries; it needs %d", name, n, count), NULL;
    for (int i = 0; i < count; ++i) {
        if (check_01 && v[i] != 0 && v[i] != 1)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%s[%d] is %lld; it must be 0 or 1", name, i,
                                (long long)v[i]), NULL;
        out[i] = v[i];
    }
    return out;
}

static int scan_load(sb_load_ctx *L)
{
    scan_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    int explicit_in = L->node->n_in - L->node->n_implicit;
    s->batched = L->opset < 9;
    int64_t m = sb_attr_int_req(L, "num_scan_inputs");
    if (L->status) return L->status;
    int lead = s->batched ? 1 : 0;
    if (m < 1 || m > explicit_in - lead)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "num_scan_inputs is %lld; the node has %d inputs",
                            (long long)m, explicit_in);
    s->n_scan_in = (int)m;
    s->n_state = explicit_in - lead - s->n_scan_in;
    int status = sb_subgraph_load(L, "body", s->n_state + s->n_scan_in, &s->body);
    if (status) return status;
    s->n_scan_out = sb_subgraph_outputs(s->body) - s->n_state;
    if (s->n_scan_out < 0 || L->node->n_out != s->n_state + s->n_scan_out)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "the body has %d outputs and the node %d for %d "
                            "states", sb_subgraph_outputs(s->body), L->node->n_out, s->n_state);
    if (s->batched) {   /* axes 0 of each batch entry, outputs forward */
        s->in_axes = ints_or_zeros(L, NULL, s->n_scan_in, 0);
        s->in_dirs = ints_or_zeros(L, "directions", s->n_scan_in, 1);
        s->out_axes = ints_or_zeros(L, NULL, s->n_scan_out, 0);
        s->out_dirs = ints_or_zeros(L, NULL, s->n_scan_out, 0);
    } else {
        s->in_axes = ints_or_zeros(L, "scan_input_axes", s->n_scan_in, 0);
        s->in_dirs = ints_or_zeros(L, "scan_input_directions", s->n_scan_in, 1);
        s->out_axes = ints_or_zeros(L, "scan_output_axes", s->n_scan_out, 0);
        s->out_dirs = ints_or_zeros(L, "scan_output_directions", s->n_scan_out, 1);
    }
    return L->status;
}

/* For one axis of v: the product of the dimensions before it (outer) and
 * the bytes of one element times those after it (inner). */
static void around_axis(const sb_vinfo *v, int axis, int64_t *outer, int64_t *inner_bytes)
{
    *outer = 1;
    for (int d = 0; d < axis; ++d) *outer *= v->dims[d];
    int64_t inner = sb_dtype_size(v->dtype);
    for (int d = axis + 1; d < v->rank; ++d) inner *= v->dims[d];
    *inner_bytes = inner;
}

/* One scan (opset 9's): states[N] and scans[M] in; final[N] and stacked[K]
 * out, each a new buffer. */
static int scan_core(sb_eval_ctx *E, const scan_state *s, const sb_tval *const *states,
                     const sb_tval *const *scans, sb_tval *final, sb_tval *stacked)
{
    int N = s->n_state, M = s->n_scan_in, K = s->n_scan_out;
    int64_t len = -1;
    int axis_in[64];
    if (M > 64) return sb_eval_fail(E, SB_ERR_UNSUPPORTED, "more than 64 scan inputs");
    for (int j = 0; j < M; ++j) {
        const sb_tval *x = scans[j];
        if (!x) return sb_eval_fail(E, SB_ERR_VALUE, "scan input %d is missing", j);
        int r = x->info.rank, a = (int)(s->in_axes[j] < 0 ? s->in_axes[j] + r : s->in_axes[j]);
        if (r < 1 || a < 0 || a >= r)
            return sb_eval_fail(E, SB_ERR_VALUE, "scan input %d: axis %lld is out of range for rank %d",
                                j, (long long)s->in_axes[j], r);
        if (len >= 0 && x->info.dims[a] != len)
            return sb_eval_fail(E, SB_ERR_VALUE, "scan input %d has %lld steps, scan input 0 %lld", j,
                                (long long)x->info.dims[a], (long long)len);
        len = x->info.dims[a];
        axis_in[j] = a;
    }
    sb_tval *slices = calloc((size_t)M, sizeof *slices), *cur = calloc((size_t)N + 1, sizeof *cur);
    sb_tval *outs = calloc((size_t)(N + K), sizeof *outs);
    const sb_tval **in = calloc((size_t)(N + M), sizeof *in);
    int status = SB_OK, owned = 0;
    for (int k = 0; k < K; ++k) stacked[k].data = NULL;
    for (int i = 0; i < N; ++i) final[i].data = NULL;
    if (!slices || !cur || !outs || !in) {
        status = sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    for (int j = 0; j < M && !status; ++j) {
        const sb_vinfo *v = &scans[j]->info;
        slices[j].info.dtype = v->dtype, slices[j].info.rank = v->rank - 1;
        for (int d = 0, o = 0; d < v->rank; ++d)
            if (d != axis_in[j]) slices[j].info.dims[o++] = v->dims[d];
        int64_t bytes = sb_vinfo_bytes(&slices[j].info);
        if (!(slices[j].data = sb_alloc_aligned((size_t)(bytes > 0 ? bytes : 1))))
            status = sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory");
    }
    for (int i = 0; i < N && !status; ++i) {
        if (!states[i]) status = sb_eval_fail(E, SB_ERR_VALUE, "state %d has no initial value", i);
        else cur[i] = *states[i];
    }
    if (status) goto done;
    for (int64_t t = 0; t < len; ++t) {
        for (int j = 0; j < M; ++j) {   /* slice t (or len-1-t) of scan input j */
            int64_t at = s->in_dirs[j] ? len - 1 - t : t, outer, inner;
            around_axis(&scans[j]->info, axis_in[j], &outer, &inner);
            for (int64_t o = 0; o < outer && inner > 0; ++o)
                memcpy((char *)slices[j].data + o * inner,
                       (const char *)scans[j]->data + (o * len + at) * inner, (size_t)inner);
            in[N + j] = &slices[j];
        }
        for (int i = 0; i < N; ++i) in[i] = &cur[i];
        if ((status = sb_subgraph_run(s->body, E, in, outs))) goto done;
        if (owned) control_release(cur, N);
        for (int i = 0; i < N; ++i) cur[i] = outs[i], outs[i].data = NULL;
        owned = 1;
        for (int k = 0; k < K && !status; ++k) {
            const sb_vinfo *v = &outs[N + k].info;
            int r = v->rank;
            int b = (int)(s->out_axes[k] < 0 ? s->out_axes[k] + r + 1 : s->out_axes[k]);
            if (b < 0 || b > r || r + 1 > SB_MAX_RANK) {
                status = sb_eval_fail(E, SB_ERR_VALUE, "scan output %d: axis %lld is out of range "
                                      "for rank %d", k, (long long)s->out_axes[k], r + 1);
                break;
            }
            if (t == 0) {
                sb_vinfo *w = &stacked[k].info;
                memset(w, 0, sizeof *w);
                w->dtype = v->dtype, w->rank = r + 1;
                for (int d = 0, o = 0; d < r + 1; ++d) w->dims[d] = d == b ? len : v->dims[o++];
                int64_t bytes = sb_vinfo_bytes(w);
                if (bytes < 0 || !(stacked[k].data = sb_alloc_aligned((size_t)(bytes > 0 ? bytes : 1)))) {
                    status = sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory for scan output %d", k);
                    break;
                }
            }
            const sb_vinfo *w = &stacked[k].info;
            int same = w->dtype == v->dtype && w->rank == r + 1;
            for (int d = 0, o = 0; same && d < r + 1; ++d)
                if (d != b) same = w->dims[d] == v->dims[o++];
            if (!same) {
                status = sb_eval_fail(E, SB_ERR_VALUE, "scan output %d changes type or shape "
                                      "between steps", k);
                break;
            }
            int64_t at = s->out_dirs[k] ? len - 1 - t : t, outer, inner;
            around_axis(w, b, &outer, &inner);
            for (int64_t o = 0; o < outer && inner > 0; ++o)
                memcpy((char *)stacked[k].data + (o * len + at) * inner,
                       (const char *)outs[N + k].data + o * inner, (size_t)inner);
        }
        control_release(outs + N, K);
        if (status) goto done;
    }
    for (int i = 0; i < N && !status; ++i) {
        if (owned) final[i] = cur[i], cur[i].data = NULL;
        else status = control_copy(E, &cur[i], &final[i]);
    }
    for (int k = 0; k < K && !status && len == 0; ++k) {   /* no steps: the declared shape, 0 long */
        int dtype, rank;
        int64_t dims[SB_MAX_RANK];
        sb_subgraph_output_decl(s->body, N + k, &dtype, &rank, dims);
        sb_vinfo *w = &stacked[k].info;
        memset(w, 0, sizeof *w);
        w->dtype = dtype && sb_dtype_size(dtype) ? dtype : SB_DT_FLOAT;
        w->rank = rank >= 0 && rank < SB_MAX_RANK ? rank + 1 : 1;
        int b = (int)(s->out_axes[k] < 0 ? s->out_axes[k] + w->rank : s->out_axes[k]);
        for (int d = 0, o = 0; d < w->rank; ++d) {
            if (d == b) continue;   /* the steps' axis: 0 long */
            w->dims[d] = o < rank && dims[o] > 0 ? dims[o] : 0;
            ++o;
        }
        if (!(stacked[k].data = sb_alloc_aligned(1))) status = sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory");
    }
done:
    if (owned && cur) control_release(cur, N);
    if (slices) control_release(slices, M);
    if (status) {
        control_release(stacked, K);
        control_release(final, N);
    }
    free(slices);
    free(cur);
    free(outs);
    free(in);
    return status;
}

/* Entry b of a batched tensor (its first axis dropped), as a view. */
static sb_tval batch_entry(const sb_tval *t, int64_t b)
{
    sb_tval v = {{0}, NULL};
    v.info.dtype = t->info.dtype, v.info.rank = t->info.rank - 1;
    for (int d = 1; d < t->info.rank; ++d) v.info.dims[d - 1] = t->info.dims[d];
    v.data = (char *)t->data + b * sb_vinfo_bytes(&v.info);
    return v;
}

static int scan_eval(sb_eval_ctx *E)
{
    const scan_state *s = E->state;
    int N = s->n_state, M = s->n_scan_in, K = s->n_scan_out, lead = s->batched;
    sb_tval *final = calloc((size_t)(N + K) + 1, sizeof *final), *stacked = final + N;
    if (!final) return sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory");
    int status = SB_OK;
    if (!s->batched) {
        status = scan_core(E, s, E->in, E->in + N, final, stacked);
        for (int j = 0; j < N + K && !status; ++j) status = control_give(E, j, &final[j]);
        if (status) control_release(final, N + K);
        free(final);
        return status;
    }
    /* opset 8: one scan per batch entry, written into entry b of each output */
    int64_t batch = -1;
    for (int i = 0; i < N + M && !status; ++i) {
        const sb_tval *x = E->in[lead + i];
        if (!x || x->info.rank < 1) {
            status = sb_eval_fail(E, SB_ERR_VALUE, "input %d needs a batch axis", lead + i);
        } else if (batch >= 0 && x->info.dims[0] != batch) {
            status = sb_eval_fail(E, SB_ERR_VALUE, "input %d has batch %lld, input %d %lld", lead + i,
                                  (long long)x->info.dims[0], lead, (long long)batch);
        }
        if (!status) batch = x->info.dims[0];
    }
    const sb_tval *lens = E->in[0];
    if (!status && lens) {
        int64_t full = E->in[lead + N]->info.rank >= 2 ? E->in[lead + N]->info.dims[1] : -1;
        for (int64_t b = 0; b < sb_vinfo_numel(&lens->info) && !status; ++b)
            if (!sb_dtype_is_int(lens->info.dtype) || sb_int_at(lens, b) != full)
                status = sb_eval_fail(E, SB_ERR_UNSUPPORTED, "sequence_lens other than the full "
                                      "length (%lld) are not supported", (long long)full);
    }
    sb_tval *views = calloc((size_t)(N + M) + 1, sizeof *views);
    const sb_tval **vp = calloc((size_t)(N + M) + 1, sizeof *vp);
    sb_tval *one = calloc((size_t)(N + K) + 1, sizeof *one);
    if (!status && (!views || !vp || !one)) status = sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory");
    for (int64_t b = 0; b < batch && !status; ++b) {
        for (int i = 0; i < N + M; ++i) views[i] = batch_entry(E->in[lead + i], b), vp[i] = &views[i];
        if ((status = scan_core(E, s, vp, vp + N, one, one + N))) break;
        for (int j = 0; j < N + K && !status; ++j) {
            int64_t bytes = sb_vinfo_bytes(&one[j].info);
            if (b == 0) {
                final[j].info = one[j].info;
                final[j].info.rank = one[j].info.rank + 1;
                final[j].info.dims[0] = batch;
                for (int d = 0; d < one[j].info.rank; ++d) final[j].info.dims[d + 1] = one[j].info.dims[d];
                int64_t total = sb_vinfo_bytes(&final[j].info);
                if (one[j].info.rank + 1 > SB_MAX_RANK || total < 0 ||
                    !(final[j].data = sb_alloc_aligned((size_t)(total > 0 ? total : 1))))
                    status = sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory for output %d", j);
            } else {
                int same = final[j].info.dtype == one[j].info.dtype &&
                           final[j].info.rank == one[j].info.rank + 1;
                for (int d = 0; same && d < one[j].info.rank; ++d)
                    same = final[j].info.dims[d + 1] == one[j].info.dims[d];
                if (!same) status = sb_eval_fail(E, SB_ERR_VALUE, "output %d changes shape between "
                                                 "batch entries", j);
            }
            if (!status && bytes > 0) memcpy((char *)final[j].data + b * bytes, one[j].data, (size_t)bytes);
        }
        control_release(one, N + K);
    }
    for (int j = 0; j < N + K && !status && batch == 0; ++j)
        status = sb_eval_fail(E, SB_ERR_VALUE, "a batch of 0 is not supported");
    for (int j = 0; j < N + K && !status; ++j) status = control_give(E, j, &final[j]);
    if (status) control_release(final, N + K);
    free(views);
    free(vp);
    free(one);
    free(final);
    return status;
}

const sb_op_def sb_op_Scan = {
    .name = "Scan", .load = scan_load, .infer = control_infer, .eval = scan_eval,
    .flags = SB_OP_NO_FOLD};
