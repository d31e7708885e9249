/* Internal interfaces of the convolution kernels (conv.c, depthwise.c) and the
 * epilogue they share with the matrix product. */
#ifndef SB_CONV_INTERNAL_H
#define SB_CONV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* One convolution call, validated and with its output size worked out. */
typedef struct {
    int path, mode, max_threads;
    size_t n, c, h, w;                /* input, N x C x H x W contiguous */
    size_t cout, kh, kw, groups;
    size_t stride_h, stride_w, dil_h, dil_w;
    size_t pad_top, pad_bottom, pad_left, pad_right;
    size_t out_h, out_w;
    const float *x;
    const float *weights;             /* Cout x C/G x KH x KW contiguous, or null */
    const float *packed;              /* sb_conv2d_pack's layout, or null */
    const float *bias;                /* Cout values, or null */
    int activation;                   /* enum sb_activation */
    float *y;                         /* N x Cout x OH x OW contiguous */
} sb_conv_desc;

/* conv_args.c: fills d from sb_conv2d_argv's array; SB_OK or an error. */
int sb_conv_parse(const int64_t *args, sb_conv_desc *d);

/* A convolution is depthwise when every group has one input channel and
 * there is more than one group; it then runs the direct kernel of
 * depthwise.c. Its packed weights are the plain weights. */
static inline int sb_conv_is_depthwise(size_t cin_per_group, size_t groups)
{
    return cin_per_group == 1 && groups > 1;
}

/* depthwise.c: the whole call (every image and channel), both modes. */
int sb_depthwise_run(const sb_conv_desc *d);

/* single_column.c: a pointwise layer with a 1 x 1 output (every image and
 * group) from weights packed for tile (every tile has the kernel). */
struct sb_path_desc;
void sb_single_column_run(const sb_conv_desc *d, const struct sb_path_desc *tile,
                          const float *packed);

/* epilogue.c: to rows x cols outputs at c (row stride ldc), in this order:
 * + row_bias[i] on row i (one rounded add; skipped when row_bias is null),
 * the activation, and in exact mode NaN made canonical (0x7FC00000). */
void sb_epilogue_rows(float *c, ptrdiff_t ldc, size_t rows, size_t cols, const float *row_bias,
                      int activation, int exact);

#endif
