/* A two-operand contraction (einsum.h). */
#include <string.h>
#include "kernels/einsum.h"
#include "framework/walk.h"
#include "kernels/copy.h"

static int64_t round64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

int64_t sb_einsum_scratch_bytes(const sb_einsum_call *c)
{
    int64_t a = c->nb * c->m * c->k, b = c->nb * c->k * c->n, p = c->nb * c->m * c->n;
    return round64(a * 4) + round64(b * 4) + (c->product_is_y ? 0 : round64(p * 4));
}

/* y (dense, shape) = x read at strides, float32: one strided copy over the
 * merged walk. */
static int gather(int threads, int rank, const int64_t *shape_in, const int64_t *strides, const float *x,
                  float *y)
{
    int64_t shape[SB_MAX_BATCH_DIMS], xs[SB_MAX_BATCH_DIMS], ys[SB_MAX_BATCH_DIMS], step = 1;
    for (int d = rank - 1; d >= 0; --d) {
        shape[d] = shape_in[d], xs[d] = strides[d], ys[d] = step;
        step *= shape[d];
    }
    if (step == 0) return SB_OK;
    int64_t *walk[2] = {xs, ys};
    rank = sb_merge_walk(rank, shape, 2, walk);
    return sb_copy_words(threads, rank, shape, x, xs, y, ys);
}

int sb_einsum_run(const sb_einsum_call *c, int path, int mode, int threads, const float *a,
                  const float *b, float *y, void *scratch)
{
    if (c->nb * c->m * c->n == 0) return SB_OK;
    if (c->k == 0) {   /* empty sums: zeros */
        memset(y, 0, (size_t)(c->nb * c->m * c->n * 4));
        return SB_OK;
    }
    float *a3 = scratch;
    float *b3 = (float *)((uint8_t *)a3 + round64(c->nb * c->m * c->k * 4));
    float *c3 = c->product_is_y ? y : (float *)((uint8_t *)b3 + round64(c->nb * c->k * c->n * 4));
    int status = gather(threads, c->a_rank, c->a_shape, c->a_strides, a, a3);
    if (!status) status = gather(threads, c->b_rank, c->b_shape, c->b_strides, b, b3);
    if (status) return status;
    /* samebits.matmul of the (nb, m, k) and (nb, k, n) arrays */
    sb_matmul_args args;
    memset(&args, 0, sizeof args);
    sb_batch batch;
    memset(&batch, 0, sizeof batch);
    args.path = path, args.mode = mode, args.max_threads = threads;
    args.m = c->m, args.n = c->n, args.k = c->k;
    args.a = (int64_t)(intptr_t)a3, args.a_row = c->k, args.a_col = 1;
    args.b = (int64_t)(intptr_t)b3, args.b_row = c->n, args.b_col = 1, args.b_packed = 0;
    args.c = (int64_t)(intptr_t)c3, args.c_row = c->n;
    if (c->nb > 1) {
        batch.ndim = 1;
        batch.shape[0] = c->nb;
        batch.a_stride[0] = c->m * c->k, batch.b_stride[0] = c->k * c->n, batch.c_stride[0] = c->m * c->n;
        args.batch = (int64_t)(intptr_t)&batch;
    }
    if ((status = sb_matmul(&args))) return status;
    if (c->product_is_y) return SB_OK;
    return gather(threads, c->y_rank, c->y_shape, c->y_strides, c3, y);
}
