/* Col2Im (ONNX Col2Im, torch's fold; docs/onnx.md), callable without a
 * graph: column blocks summed back into an image of d spatial axes. Input
 * (N, C * prod(block), L), L the blocks in lexicographic order over the
 * grid of block positions; output (N, C, image...). Each output starts at
 * +0; then for each row r = c * prod(block) + k of the input in increasing
 * order (k the offset in the block, row-major) and each block l in
 * increasing order, the element at image position
 * grid(l) * stride - pad_begin + k * dilation, when inside the image, gets
 * + input[n, r, l] (rounded to float32). The order of torch's col2im. */
#ifndef SB_KERNELS_COL2IM_H
#define SB_KERNELS_COL2IM_H

#include <stdint.h>

#define SB_COL2IM_MAX_DIMS 8

typedef struct {
    int dims;
    int64_t n, c;
    int64_t image[SB_COL2IM_MAX_DIMS], block[SB_COL2IM_MAX_DIMS], grid[SB_COL2IM_MAX_DIMS];
    int64_t stride[SB_COL2IM_MAX_DIMS], dilation[SB_COL2IM_MAX_DIMS], pad_begin[SB_COL2IM_MAX_DIMS];
} sb_col2im_args;

void sb_col2im(const sb_col2im_args *a, const float *x, float *y);

#endif
