/* ONNX Trilu (docs/onnx.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "graph/ops/index/index_util.h"

typedef struct { int64_t upper; } trilu_state;   /* .int_attrs, in order */

static int trilu_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    if (x->info.rank < 2) {
        char xs[256];
        sb_shape_text(&x->info, xs, sizeof xs);
        return sb_infer_fail(I, SB_ERR_VALUE, "input must have at least 2 dimensions, got %s", xs);
    }
    if (I->n_in > 1 && I->in[1]) {
        const sb_tval *k = sb_infer_int(I, 1, "k");
        if (!k) return SB_ERR_TYPE;
        int status = one_value_shape(I, k, "k");
        if (status) return status;
    }
    I->out[0] = x->info;
    I->inplace = 0;
    return SB_OK;
}

static int trilu_run(sb_run_ctx *R)
{
    const trilu_state *s = R->state;
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    int64_t k = 0;
    if (R->n_in > 1 && R->in[1]) int_value(R->in[1], 0, &k);   /* beyond int64: INT64_MAX */
    int rank = x->info.rank, esz = sb_dtype_size(x->info.dtype);
    int64_t rows = x->info.dims[rank - 2], cols = x->info.dims[rank - 1];
    int64_t n = sb_vinfo_numel(&x->info), plane = rows * cols;
    if (n == 0) return SB_OK;
    uint8_t *yd = y->data;
    const uint8_t *xd = x->data;
    for (int64_t p = 0; p < n; p += plane)
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) {
                int64_t at = p + i * cols + j;
                int keep = s->upper ? j - i >= k : j - i <= k;
                if (keep) {
                    if (yd != xd) copy_elem(yd, at, xd, at, esz);
                } else {
                    memset(yd + at * esz, 0, (size_t)esz);   /* +0, or integer 0 */
                }
            }
    return SB_OK;
}

const sb_op_def sb_op_Trilu = {
    .name = "Trilu", .int_attrs = {{"upper", 1}}, .infer = trilu_infer, .run = trilu_run};
