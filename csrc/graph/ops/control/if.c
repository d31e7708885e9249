/* ONNX If (docs/onnx.md): runs then_branch when cond's one element is true,
 * else else_branch; the node's outputs are the branch's. A cond that is a
 * constant at load (an initializer, a folded Shape -> Equal chain) picks
 * its branch then: only that branch is loaded and planned, so an operator
 * the other branch uses never refuses the model. */
#include <stdlib.h>
#include "graph/ops/control/control_util.h"

typedef struct {
    sb_subgraph *branch[2];      /* else, then; null where never taken */
} if_state;

static int if_load(sb_load_ctx *L)
{
    if (L->node->n_in - L->node->n_implicit < 1 || L->node->in[0] < 0)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "input 0 (cond) is missing");
    if_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    const sb_tval *cond = sb_load_const(L, 0);
    static const char *const attr[2] = {"else_branch", "then_branch"};
    int only = -1;
    if (cond && sb_vinfo_numel(&cond->info) == 1)
        only = cond->info.dtype == SB_DT_FLOAT ? ((const float *)cond->data)[0] != 0.0f
               : sb_dtype_is_int(cond->info.dtype) ? sb_int_at(cond, 0) != 0 : -1;
    for (int b = 0; b < 2; ++b) {
        if (only >= 0 && b != only) {
            sb_attr_ignore(L, attr[b]);   /* never taken: never loaded */
            continue;
        }
        int status = sb_subgraph_load(L, attr[b], 0, &s->branch[b]);
        if (status) return status;
        if (sb_subgraph_outputs(s->branch[b]) != L->node->n_out)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%s has %d outputs and the node %d", attr[b],
                                sb_subgraph_outputs(s->branch[b]), L->node->n_out);
    }
    return SB_OK;
}

static int if_eval(sb_eval_ctx *E)
{
    const if_state *s = E->state;
    int taken = control_truth(E, E->in[0], "cond");
    if (taken < 0) return SB_ERR_VALUE;
    sb_subgraph *branch = s->branch[taken];
    if (!branch) return sb_eval_fail(E, SB_ERR_VALUE, "cond changed after load");
    sb_tval small[16];
    sb_tval *outs = E->n_out <= 16 ? small : calloc((size_t)E->n_out, sizeof *outs);
    if (!outs) return sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory");
    memset(outs, 0, (size_t)E->n_out * sizeof *outs);
    int status = sb_subgraph_run(branch, E, NULL, outs);
    for (int j = 0; !status && j < E->n_out; ++j) status = control_give(E, j, &outs[j]);
    if (status) control_release(outs, E->n_out);
    if (outs != small) free(outs);
    return status;
}

const sb_op_def sb_op_If = {
    .name = "If", .load = if_load, .infer = control_infer, .eval = if_eval, .flags = SB_OP_NO_FOLD};
