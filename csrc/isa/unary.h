/* Elementwise operations of one input (unary.c): the operation codes shared
 * by the C API and the kernels, and the kernel type an ISA provides. */
#ifndef SB_UNARY_H
#define SB_UNARY_H

#include <stddef.h>
#include "samebits.h"

/* The operation codes: enum sb_unary_op of samebits.h (tools/make_tables.py). */

/* y[i] = op(x[i]) for i < n (param: leaky_relu's slope); y is x or does not
 * overlap it. */
typedef void (*sb_unary_kernel_fn)(int op, float param, const float *x, float *y, size_t n);

/* One row of an elementwise operation of two operands (binary.c): y[j] =
 * op(a[j*sa], b[j*sb]) for j < n, op an enum sb_binary_op, each element one
 * IEEE operation (math/arith.h), so every path gives the same bits; a
 * vector path's compiler runs the common stride pairs (1 and 1, 1 and 0,
 * 0 and 1) a lane per element. y may be a or b (sa or sb 1). */
typedef void (*sb_binary_row_fn)(int op, const float *a, ptrdiff_t sa, const float *b, ptrdiff_t sb,
                                 float *y, size_t n);

/* Each path's kernels (isa/<path>/unary_<path>.c, built under the same
 * conditions as its ukernel_<path>.c); its sb_unary_config (isa.h) holds them. */
#define SB_UNARY_DECLARE(isa)                                                               \
    void sb_unary_##isa##_exact(int op, float param, const float *x, float *y, size_t n);  \
    void sb_unary_##isa##_fast(int op, float param, const float *x, float *y, size_t n);  \
    void sb_binary_row_##isa(int op, const float *a, ptrdiff_t sa, const float *b,         \
                             ptrdiff_t sb, float *y, size_t n);
SB_UNARY_DECLARE(scalar)
SB_UNARY_DECLARE(vec4)
SB_UNARY_DECLARE(avx2)
SB_UNARY_DECLARE(avx512)
SB_UNARY_DECLARE(neon)

#endif
