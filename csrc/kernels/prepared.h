/* The operations' calls (elementwise, convolution, matrix product) checked
 * and planned once and run many times (the graph runtime's steps, prepared when a plan is made): prepare
 * checks every argument but the pointers and plans the chunks, which never
 * depend on the thread count; run_prepared only runs the chunks. sb_binary
 * and sb_unary are prepare, a check of the pointers, then run_prepared, so
 * both forms give the same bits. */
#ifndef SB_OPS_PREPARED_H
#define SB_OPS_PREPARED_H

#include <stddef.h>
#include <stdint.h>
#include "samebits.h"
#include "isa/isa.h"
#include "framework/step.h"

typedef struct sb_binary_call {
    int op, ndim;                 /* ndim: after merging dimensions */
    int64_t shape[SB_MAX_BATCH_DIMS];
    int64_t a_stride[SB_MAX_BATCH_DIMS], b_stride[SB_MAX_BATCH_DIMS];
    size_t total, cols, pieces;   /* pieces: of each row of cols outputs */
    sb_binary_row_fn row;         /* the path's row kernel */
    sb_step_plan plan;            /* units: row pieces */
} sb_binary_call;

/* SB_OK, or the status sb_binary would return for these arguments (the
 * pointers are not read). */
int sb_binary_prepare(const sb_binary_args *args, sb_binary_call *call);
void sb_binary_run_prepared(const sb_binary_call *call, const float *a, const float *b, float *y,
                            int max_threads);

typedef struct sb_unary_call {
    sb_unary_kernel_fn kernel;    /* the path's, in the mode's form */
    int op;
    float param;
    size_t count;
    sb_step_plan plan;            /* units: elements */
} sb_unary_call;

int sb_unary_prepare(const sb_unary_args *args, sb_unary_call *call);
/* x and y the same array or apart (never a partial overlap). */
void sb_unary_run_prepared(const sb_unary_call *call, const float *x, float *y, int max_threads);

/* A convolution (sb_conv2d's arguments, whatever its pointers), parsed,
 * checked and with its product planned: ROUTE and plan as sb_conv2d would
 * take them. Opaque; sb_conv2d_call_bytes() bytes, 8-byte aligned. */
typedef struct sb_conv2d_call sb_conv2d_call;
size_t sb_conv2d_call_bytes(void);
int sb_conv2d_prepare(const sb_conv2d_args *args, sb_conv2d_call *call);
/* A graph Conv's fused epilogue steps (sb_epilogue_ops, isa/kernels.h):
 * Cout x 4 floats of a BatchNormalization (mean, r, weight, bias per output
 * channel), and a residual of y's shape and layout that never overlaps y;
 * either may be null. */
typedef struct {
    const float *affine, *residual;
} sb_conv_fused;

/* The call on these operands (weights in the layout the arguments said:
 * plain or sb_conv2d_pack's; bias and fused null for none); sb_conv2d's
 * status. */
int sb_conv2d_run_prepared(const sb_conv2d_call *call, const float *x, const float *weights,
                           const float *bias, const sb_conv_fused *fused, float *y,
                           int max_threads);
/* sb_conv2d with fused steps (null for none). */
int sb_conv2d_fused(const sb_conv2d_args *args, const sb_conv_fused *fused);

/* A matrix product (sb_matmul's arguments, its batch read now, whatever its
 * pointers), checked and planned. Opaque; sb_matmul_call_bytes() bytes.
 * b is packed when the arguments said b_packed; bias null for none. */
typedef struct sb_matmul_call sb_matmul_call;
size_t sb_matmul_call_bytes(void);
int sb_matmul_prepare(const sb_matmul_args *args, sb_matmul_call *call);
int sb_matmul_run_prepared(const sb_matmul_call *call, const float *a, const float *b,
                           const float *bias, float *c, int max_threads);

#endif
