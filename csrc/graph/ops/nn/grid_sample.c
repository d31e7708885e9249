/* ONNX GridSample (opset 16 on; docs/onnx.md): 4-D inputs, and 5-D ones
 * (linear and nearest, from opset 20) on kernels/grid_sample.c. Opset 16 names the modes bilinear and bicubic,
 * opset 20 linear and cubic; both are accepted. */
#include <string.h>
#include "graph/op.h"
#include "graph/py_text.h"
#include "kernels/grid_sample.h"

typedef struct { int mode, padding, align; } grid_state;

static int grid_load(sb_load_ctx *L)
{
    grid_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->align = sb_attr_int(L, "align_corners", 0) != 0;
    const char *mode = sb_attr_str(L, "mode", L->opset < 20 ? "bilinear" : "linear");
    const char *pad = sb_attr_str(L, "padding_mode", "zeros");
    if (L->status) return L->status;
    if (!strcmp(mode, "bilinear") || !strcmp(mode, "linear")) s->mode = SB_GS_LINEAR;
    else if (!strcmp(mode, "nearest")) s->mode = SB_GS_NEAREST;
    else if (!strcmp(mode, "bicubic") || !strcmp(mode, "cubic")) s->mode = SB_GS_CUBIC;
    else return sb_load_fail(L, SB_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
    if (!strcmp(pad, "zeros")) s->padding = SB_GS_ZEROS;
    else if (!strcmp(pad, "border")) s->padding = SB_GS_BORDER;
    else if (!strcmp(pad, "reflection")) s->padding = SB_GS_REFLECTION;
    else return sb_load_fail(L, SB_ERR_UNSUPPORTED, "padding_mode '%s' is not supported", pad);
    return SB_OK;
}

static int grid_infer(sb_infer_ctx *I)
{
    const grid_state *s = I->state;
    const sb_tval *x = sb_infer_float(I, 0, "X"), *g = sb_infer_float(I, 1, "grid");
    if (!x || !g) return SB_ERR_TYPE;
    int r = x->info.rank;
    if (r != 4 && r != 5)
        return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "X must be 4-D (N, C, H, W) or 5-D (N, C, D, H, W)");
    if (r == 5 && s->mode == SB_GS_CUBIC)
        return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "cubic mode samples 4-D inputs only (as ONNX says)");
    char gs[256];
    sb_shape_text(&g->info, gs, sizeof gs);
    if (g->info.rank != r || g->info.dims[0] != x->info.dims[0] || g->info.dims[r - 1] != r - 2)
        return sb_infer_fail(I, SB_ERR_VALUE, "grid %s must be (N, %sH_out, W_out, %d) with X's N", gs,
                             r == 5 ? "D_out, " : "", r - 2);
    for (int d = 2; d < r; ++d)
        if (x->info.dims[d] < 1)
            return sb_infer_fail(I, SB_ERR_VALUE, "X's spatial axes must be at least 1 long");
    I->out[0].dtype = SB_DT_FLOAT, I->out[0].rank = r;
    I->out[0].dims[0] = x->info.dims[0], I->out[0].dims[1] = x->info.dims[1];
    for (int d = 2; d < r; ++d) I->out[0].dims[d] = g->info.dims[d - 1];
    return SB_OK;
}

static int grid_run(sb_run_ctx *R)
{
    const grid_state *s = R->state;
    const sb_tval *x = R->in[0], *g = R->in[1];
    int r = x->info.rank, v = r == 5;
    sb_grid_sample_args a = {0};
    a.n = x->info.dims[0], a.c = x->info.dims[1];
    a.d = v ? x->info.dims[2] : 0, a.h = x->info.dims[r - 2], a.w = x->info.dims[r - 1];
    a.dout = v ? g->info.dims[1] : 0, a.ho = g->info.dims[r - 3], a.wo = g->info.dims[r - 2];
    a.mode = s->mode, a.padding = s->padding, a.align_corners = s->align;
    a.x = x->data, a.grid = g->data, a.y = R->out[0]->data, a.max_threads = R->threads;
    int status = sb_grid_sample(&a);
    return status ? sb_run_fail(R, status, "grid sample failed (status %d)", status) : SB_OK;
}

const sb_op_def sb_op_GridSample = {
    .name = "GridSample", .load = grid_load, .infer = grid_infer, .run = grid_run};
