/* ONNX TensorScatter (opset 24; docs/onnx.md): present_cache = past_cache
 * with `update` written along `axis` (the sequence axis, not 0) from
 * write_indices[batch] (0 without them), each position modulo the cache's
 * length in 'circular' mode; in 'linear' mode a write past the end is an
 * IndexError. Bytes are copied: any element type. */
#include <string.h>
#include "graph/op.h"

typedef struct { int64_t axis; int circular; } tensor_scatter_state;

static int tensor_scatter_load(sb_load_ctx *L)
{
    tensor_scatter_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int(L, "axis", -2);
    const char *mode = sb_attr_str(L, "mode", "linear");
    if (L->status) return L->status;
    if (!strcmp(mode, "circular")) s->circular = 1;
    else if (strcmp(mode, "linear"))
        return sb_load_fail(L, SB_ERR_VALUE, "mode='%s' is not 'linear' or 'circular'", mode);
    return SB_OK;
}

/* The sequence axis, or -1 after an error. */
static int scatter_axis(sb_infer_ctx *I)
{
    const tensor_scatter_state *s = I->state;
    const sb_tval *past = sb_infer_input(I, 0, "past_cache"), *up = sb_infer_input(I, 1, "update");
    if (!past || !up) return -1;
    int r = past->info.rank;
    int64_t axis = s->axis < 0 ? s->axis + r : s->axis;
    if (r < 2 || axis < 1 || axis >= r) {
        sb_infer_fail(I, SB_ERR_VALUE, "axis %lld must name a non-batch axis of the %d-D cache",
                      (long long)s->axis, r);
        return -1;
    }
    int ok = up->info.rank == r && up->info.dtype == past->info.dtype &&
             up->info.dims[axis] <= past->info.dims[axis];
    for (int i = 0; ok && i < r; ++i) ok = i == axis || up->info.dims[i] == past->info.dims[i];
    if (!ok) {
        sb_infer_fail(I, SB_ERR_VALUE, "update must be the cache's type and shape but for a sequence "
                      "axis no longer than the cache's");
        return -1;
    }
    const sb_tval *wi = I->n_in > 2 ? I->in[2] : NULL;
    if (wi && (!sb_dtype_is_int(wi->info.dtype) || wi->info.dtype == SB_DT_BOOL || wi->info.rank != 1 ||
               wi->info.dims[0] != past->info.dims[0])) {
        sb_infer_fail(I, SB_ERR_VALUE, "write_indices must be integers of shape (batch_size,)");
        return -1;
    }
    return (int)axis;
}

static int tensor_scatter_infer(sb_infer_ctx *I)
{
    if (scatter_axis(I) < 0) return SB_ERR_VALUE;
    I->out[0] = I->in[0]->info;
    I->inplace = 0;
    return SB_OK;
}

static int tensor_scatter_run(sb_run_ctx *R)
{
    const tensor_scatter_state *s = R->state;
    sb_infer_ctx I;
    sb_vinfo outs[1];
    sb_infer_from_run(R, &I, outs);
    int axis = scatter_axis(&I);
    if (axis < 0) return SB_ERR_VALUE;
    const sb_tval *past = R->in[0], *up = R->in[1], *wi = R->n_in > 2 ? R->in[2] : NULL;
    uint8_t *y = R->out[0]->data;
    int64_t bytes = sb_vinfo_bytes(&past->info);
    if (bytes > 0 && (const void *)y != past->data) memcpy(y, past->data, (size_t)bytes);
    int64_t size = sb_dtype_size(past->info.dtype), inner = size;
    for (int i = axis + 1; i < past->info.rank; ++i) inner *= past->info.dims[i];
    int64_t batch = past->info.dims[0], per_batch = 1;
    for (int i = 1; i < axis; ++i) per_batch *= past->info.dims[i];
    int64_t cache_len = past->info.dims[axis], len = up->info.dims[axis];
    const uint8_t *u = up->data;
    for (int64_t b = 0; b < batch; ++b) {
        int64_t start = wi ? sb_int_at(wi, b) : 0;
        if (start < 0 || (!s->circular && start + len > cache_len) || (s->circular && cache_len == 0 && len))
            return sb_run_fail(R, SB_ERR_INDEX, "write index %lld with %lld updates is out of range for "
                               "a cache of length %lld", (long long)start, (long long)len,
                               (long long)cache_len);
        for (int64_t p = 0; p < per_batch; ++p)
            for (int64_t t = 0; t < len; ++t) {
                int64_t at = s->circular ? (start + t) % cache_len : start + t;
                memcpy(y + ((b * per_batch + p) * cache_len + at) * inner,
                       u + ((b * per_batch + p) * len + t) * inner, (size_t)inner);
            }
    }
    return SB_OK;
}

const sb_op_def sb_op_TensorScatter = {
    .name = "TensorScatter", .load = tensor_scatter_load, .infer = tensor_scatter_infer,
    .run = tensor_scatter_run};
