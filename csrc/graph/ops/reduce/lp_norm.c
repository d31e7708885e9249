/* ONNX LpNormalization (docs/onnx.md): p 1 or 2 along one axis; the
 * compute is kernels/norm_stats.c's sb_lp_normalize. */
#include "kernels/norm_stats.h"
#include "graph/ops/reduce/reduce_util.h"

typedef struct { int64_t axis, p; } lp_state;   /* .int_attrs, in order */

static int lp_infer(sb_infer_ctx *I)
{
    const lp_state *s = I->state;
    const sb_tval *x = need_float(I, 0, "input");
    if (!x) return SB_ERR_TYPE;
    if (s->p != 1 && s->p != 2)
        return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "p=%lld is not supported (1 and 2 are)",
                             (long long)s->p);
    int a, status = sb_infer_axis(I, s->axis, x->info.rank, "axis", &a);
    if (status) return status;
    I->out[0] = x->info;
    return SB_OK;   /* (each line is read whole before it is written: in place is safe) */
}

static int lp_run(sb_run_ctx *R)
{
    const lp_state *s = R->state;
    const sb_tval *x = R->in[0];
    int r = x->info.rank, a = (int)((s->axis + r) % r);
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    sb_lp_normalize(x->data, prod_dims(x->info.dims, 0, a), x->info.dims[a],
                    prod_dims(x->info.dims, a + 1, r), (int)s->p, R->out[0]->data);
    return SB_OK;
}

const sb_op_def sb_op_LpNormalization = {
    .name = "LpNormalization", .int_attrs = {{"axis", -1}, {"p", 2}}, .infer = lp_infer,
    .run = lp_run};
