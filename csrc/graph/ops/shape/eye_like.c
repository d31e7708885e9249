/* ONNX EyeLike (docs/onnx.md): a 2-D tensor of x's shape, 1 where the column
 * minus the row is k, else 0, of `dtype` (x's type by default). */
#include <string.h>
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

typedef struct { int64_t dtype, k; } eye_state;   /* .int_attrs, in order */

static int eye_infer(sb_infer_ctx *I)
{
    const eye_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    if (x->info.rank != 2) {
        char sh[256];
        return sb_infer_fail(I, SB_ERR_VALUE, "input %s is not 2-D",
                             shape_str(&x->info, sh, sizeof sh));
    }
    int dtype = s->dtype ? (int)s->dtype : x->info.dtype;
    if (dtype != SB_DT_FLOAT && !(dtype > 0 && dtype < 64 && sb_dtype_is_int(dtype)))
        return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "dtype %d is not supported (float32, integer and "
                             "bool are)", dtype);
    I->out[0] = x->info;
    I->out[0].dtype = dtype;
    return SB_OK;
}

static int eye_run(sb_run_ctx *R)
{
    const eye_state *s = R->state;
    sb_tval *y = R->out[0];
    int64_t rows = y->info.dims[0], cols = y->info.dims[1];
    int size = sb_dtype_size(y->info.dtype);
    if (rows * cols == 0) return SB_OK;
    memset(y->data, 0, (size_t)(rows * cols * size));
    for (int64_t i = 0; i < rows; ++i) {
        int64_t j = i + s->k;
        if (j < 0 || j >= cols) continue;
        if (y->info.dtype == SB_DT_FLOAT) ((float *)y->data)[i * cols + j] = 1.0f;
        else sb_int_store(y->data, y->info.dtype, i * cols + j, 1);
    }
    return SB_OK;
}

const sb_op_def sb_op_EyeLike = {
    .name = "EyeLike", .int_attrs = {{"dtype", 0}, {"k", 0}}, .infer = eye_infer, .run = eye_run};
