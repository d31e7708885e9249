/* Internal interfaces of the convolution (conv.c, conv_args.c, depthwise.c,
 * few_columns.c, naive.c). */
#ifndef SB_CONV_INTERNAL_H
#define SB_CONV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "isa/isa.h"
#include "samebits.h"

/* One convolution call, validated and with its output size worked out. */
typedef struct {
    int path, mode, max_threads;
    const sb_isa *isa;                /* the path's ISA (null for the naive reference) */
    size_t n, c, h, w;                /* input, N x C x H x W contiguous */
    size_t cout, kh, kw, groups;
    size_t stride_h, stride_w, dil_h, dil_w;
    size_t pad_top, pad_bottom, pad_left, pad_right;
    size_t out_h, out_w;
    const float *x;
    const float *weights;             /* Cout x C/G x KH x KW contiguous, or null */
    const float *packed;              /* sb_conv2d_pack's layout, or null */
    const float *bias;                /* Cout values, or null */
    int64_t activation;               /* as sb_conv2d_args.activation */
    /* fused steps of a graph's Conv (sb_epilogue_ops): Cout x 4 floats of
     * BatchNormalization, and a residual in y's layout; null for none */
    const float *affine, *residual;
    float *y;                         /* N x Cout x OH x OW contiguous */
} sb_conv_desc;

/* conv_args.c: fills d from the argument structure; SB_OK or an error. Every
 * size is checked against SB_MAX_SIZE, the output size comes from
 * sb_window_output_size, and every element count of x, w and y must be
 * addressable. The path is not checked (the naive reference has none). */
int sb_conv_parse(const sb_conv2d_args *args, sb_conv_desc *d);
/* sb_conv_parse without its pointer checks (a call prepared before its
 * operands exist); sb_conv_pointers_ok makes them (1: every operand the
 * call reads or writes is there). */
int sb_conv_parse_call(const sb_conv2d_args *args, sb_conv_desc *d);
int sb_conv_pointers_ok(const sb_conv_desc *d);

/* A convolution is depthwise when every group has one input channel and
 * there is more than one group; it then runs the direct kernel of
 * depthwise.c. Its packed weights are the plain weights. */
static inline int sb_conv_is_depthwise(size_t cin_per_group, size_t groups)
{
    return cin_per_group == 1 && groups > 1;
}

/* A pointwise layer (1x1 kernel, unit strides, no padding) reads its input
 * planes as B, the patch matrix, in place (conv.c, few_columns.c). */
static inline int sb_conv_is_pointwise(const sb_conv_desc *d)
{
    return d->kh == 1 && d->kw == 1 && d->stride_h == 1 && d->stride_w == 1 && d->pad_top == 0 &&
           d->pad_bottom == 0 && d->pad_left == 0 && d->pad_right == 0;
}

/* padded_rows.c: input rows stored zero-padded and split by column phase,
 * read by the patch gatherer (conv.c) and the depthwise kernel: padded column
 * c of a stored row lies at (c % stride_w) * pws + c / stride_w, so that the
 * outputs of one tap read consecutive floats whatever the stride. */
typedef struct {
    const sb_conv_desc *d;
    size_t pw, pws, rs;           /* padded width read, width of one phase, stored row */
    const size_t *lo, *hi;        /* per phase: the positions that hold input */
} sb_padded_rows;

/* Fills pw, pws and rs (lo and hi null); 0 when a size overflows. */
int sb_padded_rows_size(const sb_conv_desc *d, sb_padded_rows *rows);
/* The phase bounds, stride_w entries each, for rows->lo and rows->hi. */
void sb_padded_phase_bounds(const sb_padded_rows *rows, size_t *lo, size_t *hi);
/* Tap p = (c, ky, kx)'s offset, for c < channels, in planes of plane_floats
 * floats stored as rows: c*plane_floats + ky*dh*rs + phase(kx*dw)*pws +
 * pos(kx*dw), so that output (oy, ox) reads it at + oy*sh*rs + ox (conv.c's
 * offsets route, conv_lanes.c, depthwise.c). */
void sb_padded_tap_offsets(const sb_padded_rows *rows, size_t channels, size_t plane_floats,
                           ptrdiff_t *off);
/* Tap p = (c, ky, kx)'s offset, for c < channels, in planes of plane_floats
 * floats stored as phase planes of rows_ph rows (sb_padded_build_phase_planes):
 * c*plane_floats + ((y%sh*sw + x%sw)*rows_ph + y/sh)*pws + x/sw for
 * y = ky*dh, x = kx*dw, so that output (oy, ox) reads it at + oy*pws + ox. */
void sb_phase_tap_offsets(const sb_padded_rows *rows, size_t channels, size_t plane_floats,
                          size_t rows_ph, ptrdiff_t *off);
/* Padded rows [prow0, prow0 + nrows) of input plane `plane` (index n*C + c)
 * into dst, row s at dst + s*rs, then `slack` zeros. */
void sb_padded_build_rows(const sb_padded_rows *rows, float *dst, size_t plane, size_t prow0,
                          size_t nrows, size_t slack);

/* Padded rows [prow0, prow0 + nrows) of input plane `plane`, prow0 a
 * multiple of stride_h, stored split by row phase and column phase: stored
 * row s, column phase rx at dst + ((s % sh * sw + rx) * rows_ph + s / sh) *
 * pws (rows_ph >= ceil(nrows / sh)); the block (sh*sw*rows_ph*pws floats)
 * and `slack` zeros after it. Tap (ky, kx) of output row oy, column ox of the
 * block then lies at oy*pws + ox + ((ky*dh % sh * sw + kx*dw % sw) * rows_ph
 * + ky*dh / sh) * pws + kx*dw / sw (depthwise.c). */
void sb_padded_build_phase_planes(const sb_padded_rows *rows, float *dst, size_t plane,
                                  size_t prow0, size_t nrows, size_t rows_ph, size_t slack);

/* depthwise.c: the whole call (every image and channel), both modes; and its
 * plan for samebits.explain. */
int sb_depthwise_run(const sb_conv_desc *d);
int sb_depthwise_describe(const sb_conv_desc *d, sb_plan_info *info);

/* few_columns.c: a layer whose output map has at most SB_FEW_COLUMNS_MAP
 * positions (every image and group) from weights packed for `tile`; and its
 * plan. The choice depends on the output size only. */
#define SB_FEW_COLUMNS_MAP 8
int sb_few_columns_applies(const sb_conv_desc *d);
int sb_few_columns_run(const sb_conv_desc *d, const sb_tile *tile, const float *packed);
void sb_few_columns_describe(const sb_conv_desc *d, const sb_tile *tile, sb_plan_info *info);

/* conv_args.c: the plan_info fields common to the convolution routes planned
 * as steps (few_columns.c, conv_lanes.c): products, shape, chunks, threads
 * (of a max_threads cap) and estimate. */
void sb_conv_describe_steps(const sb_conv_desc *d, size_t cout_g, size_t cols, size_t k,
                            size_t chunks, int threads, double est_ns, sb_plan_info *info);

/* conv_lanes.c: output channels in the vector lanes, for a map whose
 * pixel-lane tiles (pixel_tile, pixel_cols columns as conv.c plans them;
 * pixel_gathers: they would gather a patch matrix) would compute many
 * positions they throw away, or gather; the weights packed for `tile`, B
 * read from planes of plane_floats floats stored as `rows` (conv.c's stored
 * planes, or the input itself). A function of the shape, the path and
 * splits_512 (sb_cpu_splits_512). */
int sb_conv_lanes_applies(const sb_conv_desc *d, const sb_tile *pixel_tile, size_t pixel_cols,
                          int pixel_gathers, int splits_512);
int sb_conv_lanes_run(const sb_conv_desc *d, const sb_tile *tile, const float *packed,
                      const float *planes, size_t plane_floats, const sb_padded_rows *rows);
void sb_conv_lanes_describe(const sb_conv_desc *d, const sb_tile *tile,
                            const sb_padded_rows *rows, sb_plan_info *info);

#endif
