/* The kernel contracts: what every ISA's kernels compute, in which order.
 * ukernel_template.h writes them once for every vector type; an ISA file
 * instantiates them (see isa.h for how they are described to the framework).
 *
 * Every kernel adds each output's products in increasing p, one accumulator
 * per output, starting from +0 (or from the stored value when it continues a
 * previous k-block); lanes hold different outputs. A fast-mode kernel fuses
 * the multiply and add where its ISA says it fuses; an exact-mode kernel never
 * does. So every kernel of a mode gives the same bits for an output. */
#ifndef SB_KERNELS_H
#define SB_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Tile: ap is an MR-row strip of packed A (element (p, r) at p*MR + r); bp
 * holds kc rows of NR values of B, row p at bp + p*b_step (b_step is NR for a
 * packed strip, the row stride for B read in place). The kernel updates the
 * full MR x NR tile at c (row stride ldc): it starts from +0 when accumulate
 * is 0, else from the values in c, and adds the kc products of each output in
 * increasing p. */
typedef void (*sb_tile_kernel_fn)(size_t kc, const float *ap, const float *bp, ptrdiff_t b_step,
                                  float *c, ptrdiff_t ldc, int accumulate);

/* Strips (optional, for a tile whose kernel call has a fixed cost, as the
 * sme path's entry to streaming mode): the tile kernel on the first `rows`
 * rows (any count) of consecutive MR-row strips of packed A (strip s at
 * ap + s*kc*MR, the last one possibly ragged) and the first `cols` (1 to
 * NR) columns of one B strip, strip s updating rows [s*MR, s*MR + MR) of
 * the outputs at c. Only the rows x cols outputs are read and written, in
 * place: no scratch tile at the edges. The same bits as the tile kernel. */
typedef void (*sb_strips_kernel_fn)(size_t rows, size_t cols, size_t kc, const float *ap,
                                    const float *bp, ptrdiff_t b_step, float *c, ptrdiff_t ldc,
                                    int accumulate);

/* Tile over A read where it is (no packing): element (p, r) of the MR x kc
 * strip is a[r*a_row + p*a_col]. Otherwise as sb_tile_kernel_fn, with the
 * same operations in the same order, hence the same bits. */
typedef void (*sb_tile_direct_fn)(size_t kc, const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
                                  const float *bp, ptrdiff_t b_step, float *c, ptrdiff_t ldc,
                                  int accumulate);

/* Tile over packed A and B rows at offsets: row p of B (NR values) is at
 * b + b_off[p]. A convolution at unit strides reads its input planes this
 * way, with no patch matrix (conv.c). Otherwise as sb_tile_kernel_fn, with
 * the same operations in the same order, hence the same bits. */
typedef void (*sb_tile_offsets_fn)(size_t kc, const float *ap, const float *b,
                                   const ptrdiff_t *b_off, float *c, ptrdiff_t ldc,
                                   int accumulate);

/* Row (a product with one row of A): the 1 x (row_strips * nr) outputs at c
 * (contiguous) of the A values a[p*a_step] and row_strips strips of nr
 * columns of B, strip s row p at bp + s*strip_step + p*b_step. nr is a tile's
 * width, a run-time value (the ISA file instantiates the widths its tiles
 * have). Same accumulate rule and per-output operations as the tile kernel. */
typedef void (*sb_row_kernel_fn)(size_t nr, size_t kc, const float *a, ptrdiff_t a_step,
                                 const float *bp, ptrdiff_t b_step, ptrdiff_t strip_step,
                                 float *c, int accumulate);

/* Few columns (a matrix times at most SB_COLUMNS_MAX vectors, from packed A):
 * y[j*y_col + r] for r < rows and j < cols = the sum over p < kc of
 * A(r, p) * x[p*x_step + j], where A is consecutive mr-row strips of one
 * k-block of packed A (strip s at ap + s*kc*mr, element (p, r) at p*mr + r).
 * Each output starts from +0, or from its y when accumulate, and adds its
 * products in increasing p with the tile kernel's operations. */
#define SB_COLUMNS_MAX 4
typedef void (*sb_column_kernel_fn)(size_t mr, size_t kc, size_t rows, size_t cols,
                                    const float *ap, const float *x, ptrdiff_t x_step, float *y,
                                    ptrdiff_t y_col, int accumulate);

/* Few columns over A read in place (optional: a matrix times at most
 * SB_COLUMNS_MAX vectors with A's rows contiguous): y[j*y_col + r] for
 * r < rows (any count) and j < cols = the sum over p < kc of
 * a[r*a_row + p] * x[p*x_step + j*x_col], with the few-column kernel's operations
 * and order (each output from +0, or from its y when accumulate, its
 * products in increasing p), hence its bits, without packing A. */
typedef void (*sb_column_direct_fn)(size_t rows, size_t kc, size_t cols, const float *a,
                                    ptrdiff_t a_row, const float *x, ptrdiff_t x_step,
                                    ptrdiff_t x_col, float *y, ptrdiff_t y_col, int accumulate);

/* Output channels in the lanes (a convolution whose map would leave a
 * pixel-lane tile's strips half empty, kernels/conv_lanes.c), W floats per
 * vector, W being the convolution tile's MR: for r < rows, s < strips and
 * i < W,
 *   out[r*SB_LANES_OUT_LD + s*W + i] = the sum over p < kc of
 *                                      A(s*W + i, p) * x[off[p] + r],
 * where A is consecutive strips of one k-block of packed A (strip s at
 * ap + s*strip_step, element (p, i) at p*W + i). Each output starts from
 * +0, or from out when accumulate, and adds its products in increasing p with
 * the tile kernel's operations; NaN canonical. rows is 1 to
 * SB_LANES_MAX_ROWS, strips 1 to the kernel's most (SB_LANES_NARROW_STRIPS
 * or SB_LANES_WIDE_STRIPS). With y (the last
 * k-block), the outputs go to y[i*y_row + r] for output channels i <
 * channels instead of out (the convolution's NCHW planes, turned over in
 * registers), after two steps of the epilogue done in registers: +
 * bias[s*W + i] (SB_LANES_OUT_LD floats, -0 where there is none: one
 * rounded add, which gives v back for -0), then 0 where the sum is <= floor
 * (0: sb_act_relu's bits; NaN: no change), then NaN canonical. */
#define SB_LANES_MAX_ROWS 7
#define SB_LANES_MAX_STRIPS 4
/* the 256-bit kernels take at most 3 strips (21 accumulators), the 512-bit
 * ones (two strips a vector) 4 */
#define SB_LANES_NARROW_STRIPS 3
#define SB_LANES_WIDE_STRIPS 4
#define SB_LANES_WIDTH 8
#define SB_LANES_OUT_LD (SB_LANES_MAX_STRIPS * SB_LANES_WIDTH)
typedef void (*sb_lanes_kernel_fn)(size_t rows, size_t strips, size_t kc, const float *ap,
                                   ptrdiff_t strip_step, const float *x, const ptrdiff_t *off,
                                   float *out, int accumulate, float *y, ptrdiff_t y_row,
                                   size_t channels, const float *bias, float floor);

/* The lanes kernel's last stores alone: for s < strips, i < W and channel
 * s*W + i < channels, y[(s*W + i)*y_row + r] = out[r*SB_LANES_OUT_LD +
 * s*W + i] for r < rows (bits unchanged). */
typedef void (*sb_lanes_store_fn)(size_t rows, size_t strips, const float *out, float *y,
                                  ptrdiff_t y_row, size_t channels);

/* Depthwise convolution rows: for r < rows and x < cols,
 * out[r*out_row + x] = the sum over taps t = 0, 1, ..., taps-1 of
 * w[t] * in[r*in_row + off[t] + x], from +0, one multiply and one add per tap
 * in increasing t (fused in fast mode on a fused ISA). The kernel may read,
 * and not use, up to 15 floats past the last column of each row it reads. */
typedef void (*sb_depthwise_kernel_fn)(size_t rows, size_t cols, size_t taps, const float *w,
                                       const ptrdiff_t *off, const float *in, ptrdiff_t in_row,
                                       float *out, ptrdiff_t out_row);

/* Depthwise planes read in place (a layer at unit strides whose output map
 * is its input's size, kernels/depthwise.c): for j < plane,
 *   out[j] = the sum over taps t = 0, 1, ..., taps-1 of w[t] * x(j, t),
 * x(j, t) = in[j + off[t]] where lane j % SB_DW_FLAT_LANES of
 * masks[t * vecs + j / SB_DW_FLAT_LANES] is set, vecs = ceil(plane /
 * SB_DW_FLAT_LANES) (one run of masks per tap), and +0 where it is not (the
 * padding; the float there is never read), from +0, with the depthwise
 * kernel's operations in increasing t; NaN canonical. */
#define SB_DW_FLAT_LANES 16
typedef void (*sb_dw_flat_fn)(size_t plane, size_t taps, const float *w, const ptrdiff_t *off,
                              const uint16_t *masks, const float *in, float *out);
/* Two planes of one layer at once, as sb_dw_flat_fn on each (plane a: w_a,
 * in_a, out_a; plane b: w_b, in_b, out_b): they share the taps' offsets and
 * masks, so each mask is read once for both, and a small plane's few
 * vectors make twice as many independent sums. */
typedef void (*sb_dw_flat_pair_fn)(size_t plane, size_t taps, const float *w_a, const float *w_b,
                                   const ptrdiff_t *off, const uint16_t *masks, const float *in_a,
                                   const float *in_b, float *out_a, float *out_b);
/* The masks of sb_dw_flat_fn for an h x w plane, a kh x kw kernel (dilation
 * dh, dw) and padding pad_top, pad_left, taps in (ky, kx) order; sizes below
 * 2^31. */
typedef void (*sb_dw_flat_masks_fn)(size_t h, size_t w, size_t kh, size_t kw, size_t dh,
                                    size_t dw, size_t pad_top, size_t pad_left,
                                    uint16_t *masks);

/* Depthwise planes as pitched runs (kernels/depthwise.c): the input plane's
 * padded rows are stored split by row and column phase, each phase plane's
 * rows `pitch` floats apart, so that output (oy, ox) is flat position
 * j = oy*pitch + ox of the block and reads tap t at in[j + off[t]], whatever
 * the strides and dilations. The kernel computes vectors v < vecs of 16
 * consecutive j: out of j = the sum over taps t = 0, 1, ..., taps-1 of
 * w[t] * in[j + off[t]], from +0, one multiply and one add per tap in
 * increasing t (fused in fast mode), NaN canonical; and stores the lanes
 * map[v].mask has (the columns ox < OW) with j < limit, in order, at
 * out + map[v].start. It reads, and does not use, in[j + off[t]] for the
 * other lanes. */
typedef struct {
    size_t start;       /* outputs before the vector's first stored lane */
    uint16_t mask;
} sb_dw_lane_map;
typedef void (*sb_dw_pitched_fn)(size_t vecs, size_t limit, size_t taps, const float *w,
                                 const ptrdiff_t *off, const float *in,
                                 const sb_dw_lane_map *map, float *out);

/* Depthwise with channels in the vector lanes (kernels/depthwise.c's lanes
 * route; SB_DW_LANES channels a block). A block's padded input is stored
 * pixel by pixel, each pixel SB_DW_LANES floats (one per channel), 64-byte
 * aligned; w holds the block's weights tap by tap (w[t*SB_DW_LANES + lane]).
 * sb_dw_lanes_fn computes rows x ow outputs: output (oy, ox), lane l, is the
 * sum over taps t = 0, 1, ..., taps-1 of w[t*SB_DW_LANES + l] times lane l
 * of the pixel at in + oy*in_row + ox*in_col + off[t] (floats), from +0,
 * one multiply and one add per tap in increasing t (fused in fast mode), NaN
 * canonical; stored at out + (oy*ow + ox)*SB_DW_LANES. */
#define SB_DW_LANES 16
typedef void (*sb_dw_lanes_fn)(size_t rows, size_t ow, size_t taps, const float *w,
                               const ptrdiff_t *off, const float *in, size_t in_row,
                               size_t in_col, float *out);
/* Rows r < rows of `cols` floats of `channels` (<= SB_DW_LANES) planes,
 * plane c at in + c*plane_step, rows row_step apart: float x of row r of
 * plane c to dst[r*dst_row + x*SB_DW_LANES + c], the lanes c >= channels +0
 * (dst 64-byte aligned, dst_row a multiple of SB_DW_LANES). */
typedef void (*sb_dw_lanes_gather_fn)(const float *in, size_t channels, size_t plane_step,
                                      size_t rows, size_t row_step, size_t cols, float *dst,
                                      size_t dst_row);
/* The way back: lane c < channels of pixel p < pixels (src + p*SB_DW_LANES,
 * 64-byte aligned) to out[c*plane_step + p]. */
typedef void (*sb_dw_lanes_scatter_fn)(const float *src, size_t pixels, size_t channels,
                                       float *out, size_t plane_step);

/* Depthwise planes at stride 2 (both directions, no dilation) read in place
 * (kernels/depthwise.c's stride-2 route): output rows [oy0, oy0 + rows) of an
 * ow-wide plane, output (oy, ox) the sum over taps (ky, kx), ky < kh and
 * kx < kw (both <= SB_DW_STRIDE2_MAX_K), in increasing ky*kw + kx, of
 * wts[ky*kw + kx] * x(2*oy - pad_top + ky, 2*ox - pad_left + kx), x being the
 * h x w plane at `in` and +0 outside it, from +0, with the depthwise kernel's
 * operations; NaN canonical; stored at out + (oy - oy0)*ow + ox. pad_left <=
 * 2*SB_DW_STRIDE2_MARGIN. Reads only floats of the plane; scratch holds
 * SB_DW_STRIDE2_SCRATCH(kh, ow) floats, 64-byte aligned (the input rows in
 * use, split by column parity, and a row of +0). */
#define SB_DW_STRIDE2_MAX_K 16
#define SB_DW_STRIDE2_MARGIN 16
#define SB_DW_STRIDE2_PITCH(ow) (16 * (((ow) + 15) / 16 + 2))
#define SB_DW_STRIDE2_SCRATCH(kh, ow) (2 * ((kh) + 3) * SB_DW_STRIDE2_PITCH(ow))
typedef void (*sb_dw_stride2_fn)(const float *in, size_t h, size_t w, size_t kh, size_t kw,
                                 size_t pad_top, size_t pad_left, const float *wts, size_t oy0,
                                 size_t rows, size_t ow, float *out, float *scratch);

/* Rows split by column parity (padded_rows.c, for a column step of 2): for
 * r < rows, row r of in (at in + r*in_step) to even + r*out_step and odd +
 * r*out_step: even[t] = in[2t] and odd[t] = in[2t + 1] for 2t + 1 < len, and
 * even[len / 2] = in[len - 1] when len is odd; reads in[0, len) of each row
 * and writes only those outputs (kernels/strided_copy.h's split_stride2, at
 * the path's width, with no call per row). */
typedef void (*sb_split_stride2_fn)(float *even, float *odd, const float *in, size_t len,
                                    size_t rows, ptrdiff_t in_step, ptrdiff_t out_step);

/* What the epilogue does to finished outputs, in this order, each step one
 * rounded float32 operation per output (i, j):
 * - + row_bias[i] or + col_bias[j] (at most one given; none when both null);
 * - with row_affine (4 floats per row: mean, r, weight, bias, the steps of
 *   an inference BatchNormalization with r = 1 / sqrt(var + eps)):
 *   v = ((v - mean) * r) * weight + bias, four rounded operations;
 * - with residual: v = v + residual[i*ldc + j] (the residual has C's layout
 *   and never overlaps C);
 * - the activation (enum sb_activation, its parameter in the high 32 bits;
 *   with fast set, SB_ACT_SWISH_ONNX uses fast mode's sigmoid, as the
 *   graph's unfused Sigmoid node would);
 * - every NaN made canonical.
 * row_affine and residual come only with row_bias or no bias (a
 * convolution's). */
typedef struct {
    const float *row_bias, *col_bias;
    const float *row_affine;
    const float *residual;
    int64_t activation;
    int fast;   /* fast mode: SB_ACT_SWISH_ONNX takes fast mode's sigmoid */
} sb_epilogue_ops;

/* The epilogue of rows x cols outputs at c (row stride ldc), pointers of e
 * already at the piece's first row and column (isa/epilogue_template.h;
 * framework/epilogue.h). */
typedef void (*sb_epilogue_fn)(float *c, ptrdiff_t ldc, size_t rows, size_t cols,
                               const sb_epilogue_ops *e);

#endif
