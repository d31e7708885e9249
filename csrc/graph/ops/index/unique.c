/* ONNX Unique (docs/onnx.md): the unique elements (or slices along `axis`),
 * ascending (`sorted`, the default) or in order of first occurrence, with
 * the first occurrence's index, each element's group and the counts. The
 * compute is kernels/unique.c; the output's length depends on the values,
 * known at plan time for a constant input, else at run. */
#include <stdlib.h>
#include <string.h>
#include "graph/kcall.h"
#include "graph/op.h"
#include "kernels/unique.h"
#include "graph/ops/index/index_util.h"

typedef struct { int has_axis; int64_t axis, sorted; } unique_state;

static int unique_load(sb_load_ctx *L)
{
    unique_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->has_axis = sb_has_attr(L, "axis");
    s->axis = sb_attr_int(L, "axis", 0);
    s->sorted = sb_attr_int(L, "sorted", 1);
    return L->status;
}

/* The kernel's view of x; a: the axis, or -1 (flattened). */
static int unique_view(sb_infer_ctx *I, const sb_tval *x, sb_unique_args *u, int *a)
{
    const unique_state *s = I->state;
    memset(u, 0, sizeof *u);
    u->x = x->data, u->size = sb_dtype_size(x->info.dtype), u->sorted = s->sorted != 0;
    u->kind = x->info.dtype == SB_DT_FLOAT ? SB_TOPK_FLOAT32
            : sb_dtype_is_signed(x->info.dtype) ? SB_TOPK_SIGNED : SB_TOPK_UNSIGNED;
    u->outer = 1, u->n = sb_vinfo_numel(&x->info), u->inner = 1, *a = -1;
    if (!s->has_axis) return SB_OK;
    int status = sb_infer_axis(I, s->axis, x->info.rank, "axis", a);
    if (status) return status;
    u->n = x->info.dims[*a];
    for (int k = 0; k < *a; ++k) u->outer *= x->info.dims[k];
    for (int k = *a + 1; k < x->info.rank; ++k) u->inner *= x->info.dims[k];
    return SB_OK;
}

static int unique_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "X");
    if (!x) return SB_ERR_VALUE;
    sb_unique_args u;
    int a, status = unique_view(I, x, &u, &a);
    if (status) return status;
    if (sb_vinfo_numel(&x->info) > 0 && !x->data) return SB_NEEDS_VALUES;
    int64_t *scratch = malloc((size_t)(2 * u.n + 1) * sizeof *scratch);
    if (!scratch) return sb_infer_fail(I, SB_ERR_NO_MEMORY, "out of memory");
    int64_t groups = u.n ? sb_unique(&u, NULL, NULL, NULL, scratch) : 0;
    free(scratch);
    I->out[0] = x->info;
    if (a < 0) I->out[0].rank = 1, I->out[0].dims[0] = groups;
    else I->out[0].dims[a] = groups;
    for (int j = 1; j < I->n_out && j < 4; ++j) {
        memset(&I->out[j], 0, sizeof I->out[j]);
        I->out[j].dtype = SB_DT_INT64, I->out[j].rank = 1;
        I->out[j].dims[0] = j == 2 ? u.n : groups;
    }
    I->workspace = 5 * (u.n + 1) * (int64_t)sizeof(int64_t);
    return SB_OK;
}

static int unique_run(sb_run_ctx *R)
{
    const sb_tval *x = R->in[0];
    sb_infer_ctx I;
    sb_vinfo outs[4];
    sb_infer_from_run(R, &I, outs);
    sb_unique_args u;
    int a, status = unique_view(&I, x, &u, &a);
    if (status) return status;
    if (u.n == 0) return SB_OK;
    int64_t *ws = R->workspace, *first = ws + 2 * u.n, *counts = first + u.n, *inverse = counts + u.n;
    int64_t groups = sb_unique(&u, first, counts, inverse, ws);
    /* Y: each group's first slice */
    int64_t row = u.inner * u.size;
    const uint8_t *src = x->data;
    uint8_t *dst = R->out[0]->data;
    for (int64_t o = 0; o < u.outer; ++o)
        for (int64_t k = 0; k < groups; ++k)
            memcpy(dst + (o * groups + k) * row, src + (o * u.n + first[k]) * row, (size_t)row);
    const int64_t *from[4] = {NULL, first, inverse, counts};
    for (int j = 1; j < R->n_out && j < 4; ++j)
        if (R->out[j])
            memcpy(R->out[j]->data, from[j], (size_t)(j == 2 ? u.n : groups) * sizeof(int64_t));
    return SB_OK;
}

const sb_op_def sb_op_Unique = {
    .name = "Unique", .load = unique_load, .infer = unique_infer, .run = unique_run};
