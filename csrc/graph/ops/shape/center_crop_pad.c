/* ONNX CenterCropPad (opset 18; docs/onnx.md): along each of `axes` (all by
 * default) the input is cropped or zero-padded to shape[k], centered: a crop
 * starts at floor((in - target) / 2); a pad puts floor((target - in) / 2)
 * zeros before and the rest after. The other axes are unchanged. Bytes are
 * copied: any element type. */
#include <string.h>
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

typedef struct { ints_attr axes; } center_crop_pad_state;

static int center_crop_pad_load(sb_load_ctx *L)
{
    center_crop_pad_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    return read_ints_attr(L, "axes", 0, &s->axes);
}

/* The output's dimensions, and per axis where the copied window starts in
 * the input (crop) and in the output (pad). */
static int center_window(sb_infer_ctx *I, int64_t *dims, int64_t *in_at, int64_t *out_at)
{
    const center_crop_pad_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "input_data");
    if (!x) return SB_ERR_VALUE;
    int64_t target[SB_MAX_RANK];
    size_t n;
    int status = int_list(I, 1, "shape", target, SB_MAX_RANK, &n);
    if (status) return status;
    int r = x->info.rank, axes[SB_MAX_RANK];
    if (s->axes.has) {
        if ((status = norm_axes(I, s->axes.v, s->axes.n, r, "axes", axes))) return status;
    } else {
        for (int i = 0; i < r; ++i) axes[i] = i;
    }
    size_t want = s->axes.has ? s->axes.n : (size_t)r;
    if (n != want)
        return sb_infer_fail(I, SB_ERR_VALUE, "shape has %zu values for %zu axes", n, want);
    for (int i = 0; i < r; ++i) dims[i] = x->info.dims[i], in_at[i] = out_at[i] = 0;
    for (size_t k = 0; k < n; ++k) {
        int a = axes[k];
        int64_t in = x->info.dims[a], t = target[k];
        if (t < 0) return sb_infer_fail(I, SB_ERR_VALUE, "shape has a negative value %lld", (long long)t);
        dims[a] = t;
        if (in > t) in_at[a] = (in - t) / 2;
        else out_at[a] = (t - in) / 2;
    }
    return SB_OK;
}

static int center_crop_pad_infer(sb_infer_ctx *I)
{
    int64_t dims[SB_MAX_RANK], in_at[SB_MAX_RANK], out_at[SB_MAX_RANK];
    int status = center_window(I, dims, in_at, out_at);
    if (status) return status;
    I->out[0] = I->in[0]->info;
    memcpy(I->out[0].dims, dims, (size_t)I->out[0].rank * sizeof *dims);
    return SB_OK;
}

static int center_crop_pad_run(sb_run_ctx *R)
{
    sb_infer_ctx I;
    sb_vinfo outs[1];
    sb_infer_from_run(R, &I, outs);
    int64_t dims[SB_MAX_RANK], in_at[SB_MAX_RANK], out_at[SB_MAX_RANK];
    int status = center_window(&I, dims, in_at, out_at);
    if (status) return status;
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    int r = x->info.rank, size = sb_dtype_size(x->info.dtype);
    int64_t bytes = sb_vinfo_bytes(&y->info);
    if (bytes > 0) memset(y->data, 0, (size_t)bytes);
    /* the window both share: min(in, out) along each axis */
    int64_t shape[SB_MAX_RANK], xs[SB_MAX_RANK], ys[SB_MAX_RANK], xo = 0, yo = 0;
    int64_t xstep = 1, ystep = 1;
    for (int d = r - 1; d >= 0; --d) {
        shape[d] = x->info.dims[d] < dims[d] ? x->info.dims[d] : dims[d];
        xs[d] = xstep, ys[d] = ystep;
        xo += in_at[d] * xstep, yo += out_at[d] * ystep;
        xstep *= x->info.dims[d], ystep *= dims[d];
    }
    if (r == 0) {
        if (bytes > 0) memcpy(y->data, x->data, (size_t)size);
        return SB_OK;
    }
    status = copy_any(R->threads, r, shape, size, (const uint8_t *)x->data + xo * size, xs,
                      (uint8_t *)y->data + yo * size, ys);
    return status ? sb_run_fail(R, status, "copy failed (status %d)", status) : SB_OK;
}

const sb_op_def sb_op_CenterCropPad = {
    .name = "CenterCropPad", .load = center_crop_pad_load, .infer = center_crop_pad_infer,
    .run = center_crop_pad_run};
