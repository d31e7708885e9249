/* The output size of a sliding window (convolution, pooling), in one place. */
#ifndef SB_GEOMETRY_H
#define SB_GEOMETRY_H

#include <stddef.h>
#include <stdint.h>

/* floor((size + pad_before + pad_after - dilation*(kernel-1) - 1) / stride) + 1,
 * or 0 when the window does not fit once (the output would be empty).
 * Every argument must lie in [0, SB_MAX_SIZE] (2^40), kernel, dilation and
 * stride >= 1; then no intermediate can overflow int64 (the reach
 * dilation*(kernel-1) is compared by division). Returns -1 when an argument
 * is out of that range. */
int64_t sb_window_output_size(int64_t size, int64_t pad_before, int64_t pad_after, int64_t kernel,
                              int64_t dilation, int64_t stride);

/* The element counts of an NCHW windowed operation with an (N, C, OH, OW)
 * output: *plane_in = H*W, *rows = N*C*OH (output rows), each total (input
 * N*C*H*W, output rows*OW) addressable as floats. 1 when they are, 0 when a
 * product would wrap or exceed the address space. */
int sb_nchw_counts(int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh, int64_t ow,
                   size_t *plane_in, size_t *rows);

#endif
