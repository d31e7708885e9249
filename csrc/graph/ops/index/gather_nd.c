/* ONNX GatherND and ScatterND (docs/onnx.md): block moves by index tuples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "graph/ops/index/index_util.h"

typedef struct { int64_t batch_dims; } gather_nd_state;

static int gather_nd_load(sb_load_ctx *L)
{
    gather_nd_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->batch_dims = sb_attr_int(L, "batch_dims", 0);
    if (L->status) return L->status;
    if (s->batch_dims < 0)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "batch_dims=%lld must be >= 0", (long long)s->batch_dims);
    return SB_OK;
}

/* The shape checks of _nd_offsets. */
static int nd_shapes(sb_infer_ctx *I, const sb_vinfo *data, const sb_vinfo *idx, int64_t b)
{
    if (idx->rank == 0) return sb_infer_fail(I, SB_ERR_VALUE, "indices must have at least one dimension");
    int64_t m = idx->dims[idx->rank - 1];
    if (b + m > data->rank)
        return sb_infer_fail(I, SB_ERR_VALUE, "index tuples of length %lld (after %lld batch dimensions) "
                             "exceed the data's rank %d", (long long)m, (long long)b, data->rank);
    for (int k = 0; k < b; ++k)
        if (idx->dims[k] != data->dims[k]) {
            char is[256], ds[256];
            sb_shape_text(idx, is, sizeof is);
            sb_shape_text(data, ds, sizeof ds);
            return sb_infer_fail(I, SB_ERR_VALUE, "the batch dimensions of indices %s and data %s differ",
                                 is, ds);
        }
    return SB_OK;
}

/* Calls fn(flat offset of the block, tuple number) for each index tuple. */
static int nd_walk(sb_run_ctx *R, const sb_vinfo *data, const sb_tval *idx, int b,
                   int (*fn)(void *ctx, int64_t offset, int64_t t), void *ctx)
{
    int64_t xs[SB_MAX_RANK], bs[SB_MAX_RANK], coord[SB_MAX_RANK] = {0};
    sb_c_strides(data, xs);
    int outer_rank = idx->info.rank - 1;
    int64_t m = idx->info.dims[outer_rank];
    for (int d = 0; d < outer_rank; ++d) bs[d] = d < b ? xs[d] : 0;
    sb_vinfo outer = idx->info;
    outer.rank = outer_rank;
    int64_t tuples = sb_vinfo_numel(&outer), base = 0;
    if (sb_vinfo_numel(&idx->info) == 0 && m != 0) tuples = 0;
    for (int64_t t = 0; t < tuples; ++t) {
        int64_t offset = base;
        for (int64_t j = 0; j < m; ++j) {
            int d = b + (int)j;
            int64_t v = 0;
            int status = read_index(R, idx, t * m + j, data->dims[d], &v);
            if (status) return status;
            offset += v * xs[d];
        }
        int status = fn(ctx, offset, t);
        if (status) return status;
        odometer(outer_rank, outer.dims, coord, bs, &base);
    }
    return SB_OK;
}

static int gather_nd_infer(sb_infer_ctx *I)
{
    const gather_nd_state *s = I->state;
    const sb_tval *x, *idx;
    int read = data_and_indices(I, &x, &idx);
    if (read) return read;
    int low = x->info.rank < idx->info.rank ? x->info.rank : idx->info.rank;
    if (s->batch_dims >= low) {
        char xs[256], is[256];
        sb_shape_text(&x->info, xs, sizeof xs);
        sb_shape_text(&idx->info, is, sizeof is);
        return sb_infer_fail(I, SB_ERR_VALUE, "batch_dims=%lld needs data %s and indices %s of higher rank",
                             (long long)s->batch_dims, xs, is);
    }
    int status = nd_shapes(I, &x->info, &idx->info, s->batch_dims);
    if (status) return status;
    int b = (int)s->batch_dims, m = (int)idx->info.dims[idx->info.rank - 1];
    sb_vinfo *y = &I->out[0];
    y->dtype = x->info.dtype;
    y->rank = idx->info.rank - 1 + x->info.rank - b - m;
    if (y->rank > SB_MAX_RANK) return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "the output's rank %d is above %d",
                                                    y->rank, SB_MAX_RANK);
    int r = 0;
    for (int d = 0; d < idx->info.rank - 1; ++d) y->dims[r++] = idx->info.dims[d];
    for (int d = b + m; d < x->info.rank; ++d) y->dims[r++] = x->info.dims[d];
    return SB_OK;
}

typedef struct { const sb_tval *x; void *y; int size; int64_t inner; int dtype, reduction; } block_ctx;

static int take_block(void *c, int64_t offset, int64_t t)
{
    block_ctx *b = c;
    memcpy((uint8_t *)b->y + t * b->inner * b->size, (const uint8_t *)b->x->data + offset * b->size,
           (size_t)(b->inner * b->size));
    return SB_OK;
}

static int put_block(void *c, int64_t offset, int64_t t)
{
    block_ctx *b = c;   /* x: the updates */
    if (b->reduction) {
        for (int64_t e = 0; e < b->inner; ++e)
            scatter_combine(b->y, b->dtype, offset + e, b->x, t * b->inner + e, b->reduction);
    } else if (b->x->info.dtype == b->dtype) {
        memmove((uint8_t *)b->y + offset * b->size, (const uint8_t *)b->x->data + t * b->inner * b->size,
                (size_t)(b->inner * b->size));
    } else {
        for (int64_t e = 0; e < b->inner; ++e)
            sb_int_store(b->y, b->dtype, offset + e, sb_int_at(b->x, t * b->inner + e));
    }
    return SB_OK;
}

static int64_t tail_size(const sb_vinfo *x, int from)
{
    int64_t n = 1;
    for (int d = from; d < x->rank; ++d) n *= x->dims[d];
    return n;
}

static int gather_nd_run(sb_run_ctx *R)
{
    const gather_nd_state *s = R->state;
    const sb_tval *x = R->in[0], *idx = R->in[1];
    int b = (int)s->batch_dims, m = (int)idx->info.dims[idx->info.rank - 1];
    block_ctx c = {x, R->out[0]->data, sb_dtype_size(x->info.dtype), tail_size(&x->info, b + m), 0, 0};
    if (sb_vinfo_numel(&R->out[0]->info) == 0) c.inner = 0;
    return nd_walk(R, &x->info, idx, b, take_block, &c);
}

typedef struct { int reduction; } scatter_nd_state;

static int scatter_nd_load(sb_load_ctx *L)
{
    scatter_nd_state *s = sb_load_state(L, sizeof *s);
    return s ? scatter_reduction_load(L, &s->reduction) : L->status;
}

static int scatter_nd_infer(sb_infer_ctx *I)
{
    const sb_tval *data, *idx;
    int read = data_and_indices(I, &data, &idx);
    if (read) return read;
    const sb_tval *upd = sb_infer_input(I, 2, "updates");
    if (!upd) return SB_ERR_VALUE;
    int status = nd_shapes(I, &data->info, &idx->info, 0);
    if (status) return status;
    int m = (int)idx->info.dims[idx->info.rank - 1];
    sb_vinfo want = {0};
    want.rank = idx->info.rank - 1 + data->info.rank - m;
    int ok = want.rank <= SB_MAX_RANK, r = 0;
    for (int d = 0; ok && d < idx->info.rank - 1; ++d) want.dims[r++] = idx->info.dims[d];
    for (int d = m; ok && d < data->info.rank; ++d) want.dims[r++] = data->info.dims[d];
    if (!ok || !sb_vinfo_same_shape(&upd->info, &want)) {
        char us[256], ws[256] = "(...)", is[256], ds[256];
        sb_shape_text(&upd->info, us, sizeof us);
        if (ok) sb_shape_text(&want, ws, sizeof ws);
        sb_shape_text(&idx->info, is, sizeof is);
        sb_shape_text(&data->info, ds, sizeof ds);
        return sb_infer_fail(I, SB_ERR_VALUE, "updates %s must have shape %s (indices %s, data %s)",
                             us, ws, is, ds);
    }
    if ((status = scatter_types(I, data, upd))) return status;
    I->out[0] = data->info;
    I->inplace = 0;
    return SB_OK;
}

static int scatter_nd_run(sb_run_ctx *R)
{
    const sb_tval *data = R->in[0], *idx = R->in[1];
    sb_tval *y = R->out[0];
    copy_data(data, y);
    int m = (int)idx->info.dims[idx->info.rank - 1];
    const scatter_nd_state *s = R->state;
    block_ctx c = {R->in[2], y->data, sb_dtype_size(data->info.dtype), tail_size(&data->info, m),
                   data->info.dtype, s->reduction};
    if (sb_vinfo_numel(&data->info) == 0) c.inner = 0;
    return nd_walk(R, &data->info, idx, 0, put_block, &c);
}

const sb_op_def sb_op_GatherND = {
    .name = "GatherND", .load = gather_nd_load, .infer = gather_nd_infer, .run = gather_nd_run};
const sb_op_def sb_op_ScatterND = {
    .name = "ScatterND", .load = scatter_nd_load, .infer = scatter_nd_infer, .run = scatter_nd_run};
