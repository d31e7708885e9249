/* ONNX ArgMax and ArgMin (docs/onnx.md). */
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "framework/step.h"
#include "isa/unary.h"
#include "graph/ops/reduce/reduce_util.h"

typedef struct { int64_t axis, keepdims, last; int is_max; } arg_state;

static int arg_load(sb_load_ctx *L)
{
    arg_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int(L, "axis", 0);
    s->keepdims = sb_attr_int(L, "keepdims", 1);
    s->last = sb_attr_int(L, "select_last_index", 0);
    s->is_max = !strcmp(L->node->op_type, "ArgMax");
    return L->status;
}

static int arg_infer(sb_infer_ctx *I)
{
    const arg_state *s = I->state;
    const sb_tval *x = need_input(I, 0);
    if (!x) return SB_ERR_VALUE;
    int r = x->info.rank, a;
    int status = sb_infer_axis(I, s->axis, r, "axis", &a);
    if (status) return status;
    if (r == 0) return sb_infer_fail(I, SB_ERR_INDEX, "tuple index out of range");
    sb_vinfo *y = &I->out[0];
    y->dtype = SB_DT_INT64;
    y->rank = 0;
    for (int d = 0; d < r; ++d) {
        if (d == a) {
            if (s->keepdims) y->dims[y->rank++] = 1;
        } else {
            y->dims[y->rank++] = x->info.dims[d];
        }
    }
    if (x->info.dims[a] == 0 && sb_vinfo_numel(y) > 0)
        return sb_infer_fail(I, SB_ERR_VALUE, "%s over an empty axis", I->node->op_type);
    return SB_OK;
}

static int arg_run(sb_run_ctx *R)
{
    const arg_state *s = R->state;
    const sb_tval *x = R->in[0];
    int r = x->info.rank;
    int a = (int)((s->axis + r) % r);
    int64_t n = x->info.dims[a];
    int64_t outer = prod_dims(x->info.dims, 0, a), inner = prod_dims(x->info.dims, a + 1, r);
    int64_t *out = R->out[0]->data;
    int is_float = x->info.dtype == SB_DT_FLOAT;
    int is_signed = sb_dtype_is_signed(x->info.dtype);
    int last = s->last != 0, is_max = s->is_max;
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            int64_t base = o * n * inner + i, best = 0;
            if (is_float) {
                best = float_arg_extreme((const uint32_t *)x->data + base, n, inner, is_max, last);
            } else {
                int64_t b = sb_int_at(x, base);
                for (int64_t j = 0; j < n; ++j) {
                    int64_t c = sb_int_at(x, base + j * inner);
                    int better = is_signed ? (is_max ? c > b : c < b)
                                           : (is_max ? (uint64_t)c > (uint64_t)b
                                                     : (uint64_t)c < (uint64_t)b);
                    if (better || (last && c == b)) best = j, b = c;
                }
            }
            out[o * inner + i] = best;
        }
    return SB_OK;
}

const sb_op_def sb_op_ArgMax = {
    .name = "ArgMax", .load = arg_load, .infer = arg_infer, .run = arg_run};
const sb_op_def sb_op_ArgMin = {
    .name = "ArgMin", .load = arg_load, .infer = arg_infer, .run = arg_run};
