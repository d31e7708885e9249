/* One node evaluated (node_eval.h). */
#include <string.h>
#include "graph/error.h"
#include "framework/memory.h"
#include "graph/node_eval.h"

int sb_node_infer(const sb_graph *g, const sb_node *n, const sb_tval *const *in, sb_vinfo *out,
                  sb_node_needs *needs)
{
    memset(out, 0, (size_t)n->n_out * sizeof *out);
    sb_infer_ctx I = {0};
    I.node = n, I.state = n->state, I.mode = g->mode, I.path = g->path;
    I.n_in = n->n_in, I.n_out = n->n_out, I.in = in, I.out = out, I.inplace = -1;
    int status = n->op->infer(&I);
    needs->workspace = I.workspace;
    needs->inplace = I.inplace;
    needs->outputs_view_input = I.outputs_view_input;
    needs->inputs_in_output = I.inputs_in_output;
    if (status) return status;
    return sb_check_inferred_outputs(n, out);
}

int sb_node_prepare(const sb_graph *g, const sb_node *n, const sb_tval *const *in,
                    const sb_vinfo *out, void **prepared)
{
    *prepared = NULL;
    if (!n->op->prepare) return SB_OK;
    void *buffer = sb_alloc_aligned(SB_PREPARED_BYTES);
    if (!buffer) return sb_fail(SB_ERR_NO_MEMORY, "out of memory while planning");
    memset(buffer, 0, SB_PREPARED_BYTES);
    sb_prepare_ctx P = {0};
    P.node = n, P.state = n->state, P.mode = g->mode, P.path = g->path;
    P.n_in = n->n_in, P.n_out = n->n_out, P.in = in, P.out = out, P.prepared = buffer;
    int status = n->op->prepare(&P);
    if (status || P.bytes == 0 || P.bytes > SB_PREPARED_BYTES) {
        sb_free_aligned(buffer);
        if (!status && P.bytes > SB_PREPARED_BYTES)
            status = sb_fail(SB_ERR_VALUE, "node %d (%s): prepared %zu bytes, more than %d",
                             n->index, n->op_type, P.bytes, SB_PREPARED_BYTES);
        return status;
    }
    /* keep just the bytes written */
    void *kept = sb_alloc_aligned(P.bytes);
    if (!kept) {
        sb_free_aligned(buffer);
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory while planning");
    }
    memcpy(kept, buffer, P.bytes);
    sb_free_aligned(buffer);
    *prepared = kept;
    return SB_OK;
}

int sb_node_run(const sb_graph *g, const sb_node *n, int threads, const void *prepared,
                const sb_tval *const *in, sb_tval *const *out, void *workspace, int copy_view)
{
    if (n->op->flags & SB_OP_VIEW) {
        int64_t bytes = out[0] ? sb_vinfo_bytes(&out[0]->info) : 0;
        if (copy_view && bytes > 0 && out[0]->data != in[0]->data)
            memcpy(out[0]->data, in[0]->data, (size_t)bytes);
        return SB_OK;
    }
    sb_run_ctx R = {0};
    R.node = n, R.state = n->state, R.mode = g->mode, R.path = g->path, R.threads = threads;
    R.n_in = n->n_in, R.n_out = n->n_out, R.in = in, R.out = out, R.workspace = workspace;
    R.prepared = prepared;
    return n->op->run(&R);
}

int sb_node_eval(const sb_graph *g, const sb_node *n, int threads, const sb_tval *const *in,
                 sb_tval *out, int (*keep)(void *run, void *buffer), void *run)
{
    memset(out, 0, (size_t)n->n_out * sizeof *out);
    sb_eval_ctx E = {0};
    E.node = n, E.state = n->state, E.mode = g->mode, E.path = g->path, E.threads = threads;
    E.n_in = n->n_in, E.n_out = n->n_out, E.in = in, E.out = out, E.keep = keep, E.run = run;
    int status = n->op->eval(&E);
    if (status) return status;
    for (int j = 0; j < n->n_out; ++j)
        if (n->out[j] >= 0 && !out[j].info.dtype)
            return sb_fail(SB_ERR_VALUE, "node %d (%s): output %d was not computed", n->index,
                           n->op_type, j);
    return SB_OK;
}
