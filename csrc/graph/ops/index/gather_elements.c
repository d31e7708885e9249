/* ONNX GatherElements, ScatterElements and opset 9's Scatter (docs/onnx.md):
 * element moves along one axis, each a copy of one element's bits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "graph/ops/index/index_util.h"


static int gather_elements_load(sb_load_ctx *L) { return axis_load(L, 0); }

static int scatter_elements_load(sb_load_ctx *L)
{
    int status = axis_load(L, 0);
    if (status) return status;
    axis_state *s = L->node->state;
    /* opset 9's Scatter has no reduction */
    return strcmp(L->node->op_type, "Scatter") == 0 ? no_reduction(L)
           : scatter_reduction_load(L, &s->reduction);
}

/* The shape checks of _element_positions. */
static int element_shapes(sb_infer_ctx *I, const sb_vinfo *data, const sb_vinfo *idx, int axis)
{
    char ds[256], is[256];
    sb_shape_text(data, ds, sizeof ds);
    sb_shape_text(idx, is, sizeof is);
    if (idx->rank != data->rank)
        return sb_infer_fail(I, SB_ERR_VALUE, "indices %s must have the rank of the data %s", is, ds);
    for (int k = 0; k < data->rank; ++k)
        if (k != axis && idx->dims[k] > data->dims[k])
            return sb_infer_fail(I, SB_ERR_VALUE, "indices %s do not fit the data %s outside axis %d",
                                 is, ds, axis);
    if (data->rank == 0) return sb_infer_fail(I, SB_ERR_INDEX, "tuple index out of range");
    return SB_OK;
}

static int gather_elements_infer(sb_infer_ctx *I)
{
    const axis_state *s = I->state;
    const sb_tval *x, *idx;
    int read = data_and_indices(I, &x, &idx);
    if (read) return read;
    int a, status = sb_infer_axis(I, s->axis, x->info.rank, "axis", &a);
    if (status) return status;
    if ((status = element_shapes(I, &x->info, &idx->info, a))) return status;
    I->out[0] = idx->info;
    I->out[0].dtype = x->info.dtype;
    return SB_OK;
}

/* Calls fn(position in data, element of idx) for each element of idx. */
static int element_walk(sb_run_ctx *R, const sb_vinfo *data, const sb_tval *idx, int axis,
                        int (*fn)(void *ctx, int64_t pos, int64_t i), void *ctx)
{
    int64_t xs[SB_MAX_RANK], bs[SB_MAX_RANK], coord[SB_MAX_RANK] = {0};
    sb_c_strides(data, xs);
    for (int d = 0; d < data->rank; ++d) bs[d] = d == axis ? 0 : xs[d];
    int64_t n = sb_vinfo_numel(&idx->info), base = 0;
    for (int64_t i = 0; i < n; ++i) {
        int64_t v = 0;
        int status = read_index(R, idx, i, data->dims[axis], &v);
        if (status) return status;
        if ((status = fn(ctx, base + v * xs[axis], i))) return status;
        odometer(idx->info.rank, idx->info.dims, coord, bs, &base);
    }
    return SB_OK;
}

typedef struct { const void *x; void *y; int size; const sb_tval *src; int dtype, reduction; } move_ctx;

static int take_one(void *c, int64_t pos, int64_t i)
{
    move_ctx *m = c;
    copy_elem(m->y, i, m->x, pos, m->size);
    return SB_OK;
}

static int put_one(void *c, int64_t pos, int64_t i)
{
    move_ctx *m = c;
    if (m->reduction) scatter_combine(m->y, m->dtype, pos, m->src, i, m->reduction);
    else if (m->src->info.dtype == m->dtype) copy_elem(m->y, pos, m->src->data, i, m->size);
    else sb_int_store(m->y, m->dtype, pos, sb_int_at(m->src, i));
    return SB_OK;
}

static int gather_elements_run(sb_run_ctx *R)
{
    const axis_state *s = R->state;
    const sb_tval *x = R->in[0];
    int a = (int)((s->axis + x->info.rank) % x->info.rank);
    move_ctx m = {x->data, R->out[0]->data, sb_dtype_size(x->info.dtype), NULL, 0, 0};
    return element_walk(R, &x->info, R->in[1], a, take_one, &m);
}

static int scatter_elements_infer(sb_infer_ctx *I)
{
    const axis_state *s = I->state;
    const sb_tval *data, *idx;
    int read = data_and_indices(I, &data, &idx);
    if (read) return read;
    const sb_tval *upd = sb_infer_input(I, 2, "updates");
    if (!upd) return SB_ERR_VALUE;
    if (!sb_vinfo_same_shape(&upd->info, &idx->info)) {
        char us[256], is[256];
        sb_shape_text(&upd->info, us, sizeof us);
        sb_shape_text(&idx->info, is, sizeof is);
        return sb_infer_fail(I, SB_ERR_VALUE, "updates %s must have the shape of indices %s", us, is);
    }
    int a, status = sb_infer_axis(I, s->axis, data->info.rank, "axis", &a);
    if (status) return status;
    if ((status = element_shapes(I, &data->info, &idx->info, a))) return status;
    if ((status = scatter_types(I, data, upd))) return status;
    I->out[0] = data->info;
    I->inplace = 0;
    return SB_OK;
}

static int scatter_elements_run(sb_run_ctx *R)
{
    const axis_state *s = R->state;
    const sb_tval *data = R->in[0];
    sb_tval *y = R->out[0];
    int a = (int)((s->axis + data->info.rank) % data->info.rank);
    copy_data(data, y);
    move_ctx m = {NULL, y->data, sb_dtype_size(data->info.dtype), R->in[2], data->info.dtype,
                  s->reduction};
    return element_walk(R, &data->info, R->in[1], a, put_one, &m);
}

const sb_op_def sb_op_GatherElements = {
    .name = "GatherElements", .load = gather_elements_load, .infer = gather_elements_infer, .run = gather_elements_run};
const sb_op_def sb_op_ScatterElements = {
    .name = "ScatterElements", .load = scatter_elements_load, .infer = scatter_elements_infer, .run = scatter_elements_run};
const sb_op_def sb_op_Scatter = {
    .name = "Scatter", .load = scatter_elements_load, .infer = scatter_elements_infer, .run = scatter_elements_run};
