/* A two-operand contraction as Einsum computes it (docs/onnx.md, Einsum):
 * each operand copied dense in its (batch, rows, contracted) or (batch,
 * contracted, cols) order, one sb_matmul of the (nb, m, k) and (nb, k, n)
 * arrays (samebits.matmul's bits), then the (nb, m, n) product copied to
 * the output's order. Letters and equations are the graph's business
 * (graph/ops/index/einsum.c); this call only knows shapes and strides. */
#ifndef SB_KERNELS_EINSUM_H
#define SB_KERNELS_EINSUM_H

#include <stdint.h>
#include "samebits.h"

typedef struct {
    int64_t nb, m, k, n;
    /* operand a read in (batch..., rows..., contracted...) order: a_rank
     * dims of a_shape at element strides a_strides (0 to repeat a dim of 1) */
    int a_rank, b_rank, y_rank;
    int64_t a_shape[SB_MAX_BATCH_DIMS], a_strides[SB_MAX_BATCH_DIMS];
    int64_t b_shape[SB_MAX_BATCH_DIMS], b_strides[SB_MAX_BATCH_DIMS];
    /* the output (dense, y_shape) read from the (nb, m, n) product at
     * y_strides; product_is_y: that read is the identity, so the product is
     * written into y directly */
    int64_t y_shape[SB_MAX_BATCH_DIMS], y_strides[SB_MAX_BATCH_DIMS];
    int product_is_y;
} sb_einsum_call;

/* The scratch bytes of a run (64-byte aligned regions). */
int64_t sb_einsum_scratch_bytes(const sb_einsum_call *c);

/* y = the contraction of a and b; scratch: sb_einsum_scratch_bytes, 64-byte
 * aligned. A samebits.h status. */
int sb_einsum_run(const sb_einsum_call *c, int path, int mode, int threads, const float *a,
                  const float *b, float *y, void *scratch);

#endif
