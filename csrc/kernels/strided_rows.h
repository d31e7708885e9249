/* Rows of an N-D strided walk (binary.c, copy.c): the output is cut into
 * rows along its last dimension, and row r's start in two operands is found
 * from r's index over the leading dimensions, the last fastest. */
#ifndef SB_STRIDED_ROWS_H
#define SB_STRIDED_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* Element offsets of row `row` in two operands with element strides s1, s2
 * over the leading ndim - 1 dimensions of `shape`. */
static inline void sb_row_offsets(size_t row, int ndim, const int64_t *shape, const int64_t *s1,
                                  const int64_t *s2, ptrdiff_t *o1, ptrdiff_t *o2)
{
    ptrdiff_t a = 0, b = 0;
    size_t rest = row;
    for (int d = ndim - 2; d >= 0; --d) {
        size_t extent = (size_t)shape[d];
        ptrdiff_t i = (ptrdiff_t)(rest % extent);
        rest /= extent;
        a += i * (ptrdiff_t)s1[d];
        b += i * (ptrdiff_t)s2[d];
    }
    *o1 = a, *o2 = b;
}

#endif
