/* ONNX RotaryEmbedding (opset 23; docs/onnx.md): the input as (batch,
 * heads, length, head size) (4-D), or (batch, length, heads * head size)
 * with num_heads (3-D); each row rotated by kernels/rotary.c against the
 * cos and sin rows of its position: cos_cache[position_ids[b, s]] with
 * position ids, else cos_cache[b, s]. */
#include <string.h>
#include "graph/op.h"
#include "kernels/rotary.h"

typedef struct { int64_t interleaved, rotary_dim, num_heads; } rotary_state;   /* .int_attrs */

typedef struct { int64_t B, H, S, D, R; int three_d; } rotary_dims;

static int rotary_dims_of(sb_infer_ctx *I, rotary_dims *d)
{
    const rotary_state *s = I->state;
    const sb_tval *x = sb_infer_float(I, 0, "input"), *c = sb_infer_float(I, 1, "cos_cache"),
                  *sn = sb_infer_float(I, 2, "sin_cache");
    if (!x || !c || !sn) return SB_ERR_TYPE;
    const sb_tval *pos = I->n_in > 3 ? I->in[3] : NULL;
    memset(d, 0, sizeof *d);
    if (x->info.rank == 4) {
        d->B = x->info.dims[0], d->H = x->info.dims[1], d->S = x->info.dims[2], d->D = x->info.dims[3];
    } else if (x->info.rank == 3) {
        if (s->num_heads < 1 || x->info.dims[2] % s->num_heads)
            return sb_infer_fail(I, SB_ERR_VALUE, "a 3-D input needs num_heads dividing its last "
                                 "dimension");
        d->three_d = 1;
        d->B = x->info.dims[0], d->S = x->info.dims[1], d->H = s->num_heads;
        d->D = x->info.dims[2] / s->num_heads;
    } else {
        return sb_infer_fail(I, SB_ERR_VALUE, "the input must be 3-D or 4-D");
    }
    d->R = s->rotary_dim ? s->rotary_dim : d->D;
    if (d->R < 0 || d->R > d->D || d->R % 2)
        return sb_infer_fail(I, SB_ERR_VALUE, "rotary_embedding_dim %lld must be even and at most the "
                             "head size %lld", (long long)d->R, (long long)d->D);
    int want_rank = pos ? 2 : 3;
    if (c->info.rank != want_rank || !sb_vinfo_same_shape(&c->info, &sn->info) ||
        c->info.dims[want_rank - 1] != d->R / 2)
        return sb_infer_fail(I, SB_ERR_VALUE, "cos_cache and sin_cache must be %s with last dimension "
                             "%lld", pos ? "(positions, rotary dim / 2)" : "(batch, length, rotary dim / 2)",
                             (long long)(d->R / 2));
    if (pos) {
        if (!sb_dtype_is_int(pos->info.dtype) || pos->info.rank != 2 || pos->info.dims[0] != d->B ||
            pos->info.dims[1] != d->S)
            return sb_infer_fail(I, SB_ERR_VALUE, "position_ids must be integers of shape (batch, length)");
    } else if (c->info.dims[0] != d->B || c->info.dims[1] != d->S) {
        return sb_infer_fail(I, SB_ERR_VALUE, "cos_cache must be (batch, length, rotary dim / 2)");
    }
    return SB_OK;
}

static int rotary_infer(sb_infer_ctx *I)
{
    rotary_dims d;
    int status = rotary_dims_of(I, &d);
    if (status) return status;
    I->out[0] = I->in[0]->info;
    return SB_OK;
}

static int rotary_run(sb_run_ctx *R)
{
    const rotary_state *s = R->state;
    sb_infer_ctx I;
    sb_vinfo outs[1];
    sb_infer_from_run(R, &I, outs);
    rotary_dims d;
    int status = rotary_dims_of(&I, &d);
    if (status) return status;
    const float *x = R->in[0]->data, *cs = R->in[1]->data, *sn = R->in[2]->data;
    const sb_tval *pos = R->n_in > 3 ? R->in[3] : NULL;
    int64_t positions = pos ? R->in[1]->info.dims[0] : 0, half = d.R / 2;
    float *y = R->out[0]->data;
    for (int64_t b = 0; b < d.B; ++b)
        for (int64_t t = 0; t < d.S; ++t) {
            int64_t row = b * d.S + t;
            if (pos) {
                row = sb_int_at(pos, b * d.S + t);
                if (row < 0 || row >= positions)
                    return sb_run_fail(R, SB_ERR_INDEX, "position id %lld is out of range for %lld "
                                       "cached positions", (long long)row, (long long)positions);
            }
            for (int64_t h = 0; h < d.H; ++h) {
                int64_t at = d.three_d ? ((b * d.S + t) * d.H + h) * d.D : ((b * d.H + h) * d.S + t) * d.D;
                sb_rotary_row(x + at, y + at, d.D, d.R, (int)s->interleaved, cs + row * half,
                              sn + row * half);
            }
        }
    return SB_OK;
}

const sb_op_def sb_op_RotaryEmbedding = {
    .name = "RotaryEmbedding",
    .int_attrs = {{"interleaved", 0}, {"rotary_embedding_dim", 0}, {"num_heads", 0}},
    .infer = rotary_infer, .run = rotary_run};
