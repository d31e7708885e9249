/* The samebits kernels as the graph's ops call them: on tensors (sb_tval),
 * with numpy's broadcasting, strided walks merged to as few dimensions as
 * they need (kcall.c). Each returns a samebits.h status. */
#ifndef SB_GRAPH_KCALL_H
#define SB_GRAPH_KCALL_H

#include "graph/op.h"
#include "kernels/prepared.h"
#include "framework/walk.h"

/* numpy's (and ONNX's multidirectional) broadcast of n shapes into *out
 * (its dtype untouched); 0, or -1 when they do not broadcast. */
int sb_broadcast(const sb_vinfo *const *shapes, int n, sb_vinfo *out);
/* "shapes (2, 3) and (4,) do not broadcast" for an error message. */
void sb_broadcast_error_text(const sb_vinfo *const *shapes, int n, char *buf, size_t size);
/* sb_broadcast for an infer: SB_OK, or the node's failure with that text. */
int sb_infer_broadcast(sb_infer_ctx *I, const sb_vinfo *const *shapes, int n, sb_vinfo *out);
/* x's element strides over the broadcast shape `out` (0 where x repeats). */
void sb_broadcast_strides(const sb_vinfo *x, const sb_vinfo *out, int64_t *strides);

/* The call of sb_k_binary for these infos (a and b broadcast to y), ready to
 * run with sb_binary_run_prepared; a samebits.h status. */
int sb_k_binary_prepare(int mode, int path, int op, const sb_vinfo *a, const sb_vinfo *b,
                        const sb_vinfo *y, sb_binary_call *call);
/* y = op(a, b) elementwise with broadcasting, float32 (enum sb_binary_op). */
int sb_k_binary(const sb_run_ctx *R, int op, const sb_tval *a, const sb_tval *b, sb_tval *y);
/* y = op(a, b) with b one float32 value. */
int sb_k_binary_scalar(const sb_run_ctx *R, int op, const sb_tval *a, float b, sb_tval *y);
/* The call of sb_k_unary over count elements, ready for sb_unary_run_prepared. */
int sb_k_unary_prepare(int mode, int path, int op, float param, int64_t count, sb_unary_call *call);
/* y = op(x) elementwise, float32 (enum sb_unary_op, param's bits for the
 * ops that take one). */
int sb_k_unary(const sb_run_ctx *R, int op, float param, const sb_tval *x, sb_tval *y);

/* A strided copy of elements of `size` bytes: y[i] = x[i] over shape, both
 * at element strides (x's any sign or 0; y's never writing one element twice). */
int sb_k_copy(int threads, int rank, const int64_t *shape, int size, const void *x,
              const int64_t *x_strides, void *y, const int64_t *y_strides);
/* x broadcast to y's shape (dense C order): a copy. */
int sb_k_expand(int threads, const sb_tval *x, sb_tval *y);
/* y = x's axes permuted (y's dim d is x's dim perm[d]). */
int sb_k_permute(int threads, const sb_tval *x, const int *perm, sb_tval *y);
/* y = float32 of value bits, every element. */
void sb_k_fill(void *data, int64_t count, int size, const void *value);

#endif
