/* Integer reductions (int_reduce.c; ONNX's Reduce family on integer tensors,
 * docs/onnx.md): exact, wrapping like the element type, as C computes them.
 * The mean is Python's: the exact sum (in 128 bits), then its truncating
 * division by the count. */
#ifndef SB_KERNELS_INT_REDUCE_H
#define SB_KERNELS_INT_REDUCE_H

#include <stdint.h>

enum sb_int_reduce_op {
    SB_IRED_SUM, SB_IRED_MEAN, SB_IRED_MAX, SB_IRED_MIN, SB_IRED_PROD, SB_IRED_SUMSQ, SB_IRED_L1,
};

/* An integer element type: its bytes (1, 2, 4, 8), whether signed, and
 * whether bool (stored as v != 0). */
typedef struct { int size, is_signed, is_bool; } sb_int_type;

/* y = op over the axes where reduced[d] is set, of x (rank dims, C order,
 * dense): y's elements in C order of the kept axes, each the reduction of
 * its elements in C order of the reduced axes (max and min of none: 0, as
 * the caller refuses that case). y has x's type. */
void sb_int_reduce(int op, sb_int_type type, int rank, const int64_t *dims,
                   const unsigned char *reduced, const void *x, void *y);

#endif
