/* ONNX DepthToSpace and SpaceToDepth (docs/onnx.md): a reshape, a permutation and a reshape. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

typedef struct { int64_t b; int crd; } block_state;

static int depth_to_space_load(sb_load_ctx *L)
{
    block_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->b = sb_attr_int_req(L, "blocksize");
    const char *mode = sb_attr_str(L, "mode", "DCR");
    if (L->status) return L->status;
    if (s->b < 1 || (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "blocksize %lld and mode '%s' are not supported",
                            (long long)s->b, mode);
    s->crd = strcmp(mode, "CRD") == 0;
    return L->status;
}

/* SpaceToDepth gained DepthToSpace's mode at opset 28 (DCR before). */
static int space_to_depth_load(sb_load_ctx *L)
{
    block_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->b = sb_attr_int_req(L, "blocksize");
    const char *mode = L->opset >= 28 ? sb_attr_str(L, "mode", "DCR") : "DCR";
    if (L->status) return L->status;
    if (s->b < 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "blocksize %lld is not supported", (long long)s->b);
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "mode '%s' is not supported (DCR and CRD are)", mode);
    s->crd = strcmp(mode, "CRD") == 0;
    return L->status;
}

/* The 6-D view of x, the permutation and the output's shape. */
static int block_plan(sb_infer_ctx *I, const sb_tval *x, int to_space, int64_t *view, int *perm,
                      sb_vinfo *y)
{
    const block_state *s = I->state;
    int64_t b = s->b, bb = 0;
    char sh[256];
    if (to_space) {
        int fits = mul_size(b, b, &bb) && x->info.rank == 4 && x->info.dims[1] % bb == 0;
        if (!fits) {
            if (!mul_size(b, b, &bb))
                return sb_infer_fail(I, SB_ERR_VALUE, "input %s is not (N, C, H, W) with C a "
                                     "multiple of the blocksize squared",
                                     shape_str(&x->info, sh, sizeof sh));
            return sb_infer_fail(I, SB_ERR_VALUE, "input %s is not (N, C, H, W) with C a multiple "
                                 "of %lld", shape_str(&x->info, sh, sizeof sh), (long long)bb);
        }
    } else if (x->info.rank != 4 || x->info.dims[2] % b || x->info.dims[3] % b) {
        return sb_infer_fail(I, SB_ERR_VALUE, "input %s is not (N, C, H, W) with H and W multiples "
                             "of %lld", shape_str(&x->info, sh, sizeof sh), (long long)b);
    }
    int64_t n = x->info.dims[0], c = x->info.dims[1], h = x->info.dims[2], w = x->info.dims[3];
    y->dtype = x->info.dtype;
    y->rank = 4;
    y->dims[0] = n;
    if (to_space) {
        int64_t cb = c / bb;
        if (!mul_size(h, b, &y->dims[2]) || !mul_size(w, b, &y->dims[3]))
            return sb_infer_fail(I, SB_ERR_VALUE, "the output is too large");
        y->dims[1] = cb;
        if (!s->crd) {   /* (n, b, b, c', h, w) -> (n, c', h, b, w, b) */
            int64_t v[6] = {n, b, b, cb, h, w};
            int p[6] = {0, 3, 4, 1, 5, 2};
            memcpy(view, v, sizeof v), memcpy(perm, p, sizeof p);
        } else {         /* (n, c', b, b, h, w) -> (n, c', h, b, w, b) */
            int64_t v[6] = {n, cb, b, b, h, w};
            int p[6] = {0, 1, 4, 2, 5, 3};
            memcpy(view, v, sizeof v), memcpy(perm, p, sizeof p);
        }
    } else {             /* (n, c, h', b, w', b) -> (n, b, b, c, h', w'), CRD (n, c, b, b, h', w') */
        int64_t v[6] = {n, c, h / b, b, w / b, b};
        int p_dcr[6] = {0, 3, 5, 1, 2, 4}, p_crd[6] = {0, 1, 3, 5, 2, 4};
        memcpy(view, v, sizeof v), memcpy(perm, s->crd ? p_crd : p_dcr, sizeof p_dcr);
        if (!mul_size(b, b, &bb) || !mul_size(c, bb, &y->dims[1]))
            return sb_infer_fail(I, SB_ERR_VALUE, "the output is too large");
        y->dims[2] = h / b, y->dims[3] = w / b;
    }
    return SB_OK;
}

static int block_infer(sb_infer_ctx *I, int to_space)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    int64_t view[6];
    int perm[6];
    return block_plan(I, x, to_space, view, perm, &I->out[0]);
}

static int block_run(sb_run_ctx *R, int to_space)
{
    sb_infer_ctx I;
    sb_vinfo outs[16];
    sb_infer_from_run(R, &I, outs);
    const sb_tval *x = R->in[0];
    int64_t view[6];
    int perm[6];
    int status = block_plan(&I, x, to_space, view, perm, &outs[0]);
    if (status) return status;
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    status = permute_view(R->threads, sb_dtype_size(x->info.dtype), 6, view, perm, x->data,
                          R->out[0]->data);
    return status ? sb_run_fail(R, status, "the copy failed") : SB_OK;
}

static int depth_to_space_infer(sb_infer_ctx *I) { return block_infer(I, 1); }
static int depth_to_space_run(sb_run_ctx *R) { return block_run(R, 1); }
static int space_to_depth_infer(sb_infer_ctx *I) { return block_infer(I, 0); }
static int space_to_depth_run(sb_run_ctx *R) { return block_run(R, 0); }

const sb_op_def sb_op_DepthToSpace = {
    .name = "DepthToSpace", .load = depth_to_space_load, .infer = depth_to_space_infer, .run = depth_to_space_run};
const sb_op_def sb_op_SpaceToDepth = {
    .name = "SpaceToDepth", .load = space_to_depth_load, .infer = space_to_depth_infer, .run = space_to_depth_run};
