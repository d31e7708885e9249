/* ONNX ReverseSequence (docs/onnx.md): per batch entry b, the first
 * sequence_lens[b] elements along the time axis reversed, the rest copied;
 * the bits move untouched. time_axis and batch_axis are 0 and 1 in either
 * order, as ONNX defines them. */
#include <string.h>
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/index/index_util.h"

typedef struct { int64_t batch_axis, time_axis; } rs_state;   /* .int_attrs, in order */

static int rs_infer(sb_infer_ctx *I)
{
    const rs_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    const sb_tval *lens = sb_infer_int(I, 1, "sequence_lens");
    if (!lens) return SB_ERR_TYPE;
    if (!((s->batch_axis == 0 && s->time_axis == 1) || (s->batch_axis == 1 && s->time_axis == 0)))
        return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "batch_axis %lld and time_axis %lld must be 0 "
                             "and 1", (long long)s->batch_axis, (long long)s->time_axis);
    char xs[256], ls[256];
    sb_shape_text(&x->info, xs, sizeof xs);
    sb_shape_text(&lens->info, ls, sizeof ls);
    if (x->info.rank < 2 || lens->info.rank != 1 || lens->info.dims[0] != x->info.dims[s->batch_axis])
        return sb_infer_fail(I, SB_ERR_VALUE, "input %s and sequence_lens %s: one length per batch "
                             "entry (axis %lld) of an input of rank 2 or more", xs, ls,
                             (long long)s->batch_axis);
    I->out[0] = x->info;
    return SB_OK;
}

static int rs_run(sb_run_ctx *R)
{
    const rs_state *s = R->state;
    const sb_tval *x = R->in[0], *lens = R->in[1];
    sb_tval *y = R->out[0];
    int64_t batch = x->info.dims[s->batch_axis], time = x->info.dims[s->time_axis];
    int64_t inner = sb_dtype_size(x->info.dtype);
    for (int d = 2; d < x->info.rank; ++d) inner *= x->info.dims[d];
    /* element (b, t) of the two leading axes starts at byte offset off(b, t) */
    int64_t bstride = s->batch_axis == 0 ? time * inner : inner;
    int64_t tstride = s->time_axis == 0 ? batch * inner : inner;
    for (int64_t b = 0; b < batch; ++b) {
        int64_t n = sb_int_at(lens, b);
        if (n < 0 || n > time)
            return sb_run_fail(R, SB_ERR_VALUE, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                               (long long)b, (long long)n, (long long)time);
        for (int64_t t = 0; t < time; ++t) {
            int64_t from = t < n ? n - 1 - t : t;
            memcpy((uint8_t *)y->data + b * bstride + t * tstride,
                   (const uint8_t *)x->data + b * bstride + from * tstride, (size_t)inner);
        }
    }
    return SB_OK;
}

const sb_op_def sb_op_ReverseSequence = {
    .name = "ReverseSequence", .int_attrs = {{"batch_axis", 1}, {"time_axis", 0}}, .infer = rs_infer,
    .run = rs_run};
