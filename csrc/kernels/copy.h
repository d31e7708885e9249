/* The strided copy's internal entry (copy.c): callers that already hold a
 * walk (the graph's movers, Einsum's gathers) without filling sb_copy_args
 * themselves. */
#ifndef SB_KERNELS_COPY_H
#define SB_KERNELS_COPY_H

#include <stdint.h>

/* y = x over a walk of rank dims (at most SB_MAX_BATCH_DIMS) of 4-byte
 * words at element strides: sb_copy's bits. A samebits.h status. */
int sb_copy_words(int threads, int rank, const int64_t *shape, const void *x, const int64_t *x_strides,
                  void *y, const int64_t *y_strides);

#endif
