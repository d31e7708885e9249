/* 2-D convolution (NCHW): one matrix product per image and group, all of
 * them planned once and run by the driver in one parallel run.
 *
 * A is the group's weights, Cout/G rows by K = C/G*KH*KW columns, the taps
 * ordered (c, ky, kx), packed once for the call (or by sb_conv2d_pack); B is
 * the patch matrix, K rows by OH*OW columns; C is the group's output planes.
 * The product sums each output's K taps in increasing order from +0, which is
 * the convolution's definition, so every route below gives the definition's
 * bits:
 *
 * - pointwise (1x1 kernel, unit strides, no padding): B is the input itself,
 *   row p being input plane p; over a 1x1 input, a matrix-vector product
 *   (single_column.c);
 * - other shapes: the patch matrix is never built; the patches are gathered
 *   straight into packed strips (gather_patch_strips), the zero border
 *   written as they go, strip by strip inside each panel, or whole before the
 *   tiles when the call has few panels (the planner's choice).
 *
 * Bias and activation are the framework's per-tile epilogue. A depthwise
 * layer (one input channel per group) runs the direct kernel of depthwise.c. */
#include <string.h>
#include "ops/conv_internal.h"
#include "framework/checked.h"
#include "framework/driver.h"
#include "framework/memory.h"
#include "ops/strided_copy.h"

typedef struct {
    const sb_conv_desc *d;
    size_t cin_g, cout_g, k, cols;   /* channels per group, K, OH*OW */
    size_t group_floats;             /* packed weights of one group */
    const float *packed;             /* every group's packed weights */
} conv_call;

static int is_pointwise(const sb_conv_desc *d)
{
    return d->kh == 1 && d->kw == 1 && d->stride_h == 1 && d->stride_w == 1 && d->pad_top == 0 &&
           d->pad_bottom == 0 && d->pad_left == 0 && d->pad_right == 0;
}

/* len values of one input row starting at column ix0 with column step sw,
 * columns outside [0, w) as +0. The inside columns form one interval, found
 * without a division for unit steps. */
static void copy_run(float *dst, const float *row, ptrdiff_t ix0, size_t len, size_t sw, size_t w)
{
    size_t lo, hi;
    if (sw == 1) {
        lo = ix0 < 0 ? sb_min_size((size_t)-ix0, len) : 0;
        hi = ix0 >= (ptrdiff_t)w ? 0 : sb_min_size(len, w - (size_t)ix0);
    } else {
        lo = ix0 < 0 ? sb_min_size(sb_ceil_div((size_t)-ix0, sw), len) : 0;
        hi = ix0 >= (ptrdiff_t)w ? 0 : sb_min_size(len, (w - 1 - (size_t)ix0) / sw + 1);
    }
    if (hi < lo) hi = lo;
    for (size_t t = 0; t < lo; ++t) dst[t] = 0.0f;
    if (sw == 1) {
        if (hi > lo) memcpy(dst + lo, row + ix0 + (ptrdiff_t)lo, (hi - lo) * sizeof(float));
    } else if (sw == 2) {
        if (hi > lo)
            copy_stride2(dst + lo, row + ix0 + 2 * (ptrdiff_t)lo, hi - lo,
                         ix0 + 2 * (ptrdiff_t)hi <= (ptrdiff_t)w);
    } else {
        const float *src = row + ix0;
        for (size_t t = lo; t < hi; ++t) dst[t] = src[(ptrdiff_t)(t * sw)];
    }
    for (size_t t = hi; t < len; ++t) dst[t] = 0.0f;
}

/* A run: output columns of a strip that lie in one output row; iy0 and ix0
 * are the input row and column of its first column for tap (0, 0). */
typedef struct { ptrdiff_t iy0, ix0; size_t len; } patch_run;

/* Whole-strip copies of a compile-time size become a few vector moves. */
static inline void copy_floats(float *dst, const float *src, size_t count)
{
    switch (count) {
    /* __builtin_memcpy: inlined also in the freestanding WebAssembly build */
    case 8: __builtin_memcpy(dst, src, 8 * sizeof(float)); return;
    case 16: __builtin_memcpy(dst, src, 16 * sizeof(float)); return;
    case 32: __builtin_memcpy(dst, src, 32 * sizeof(float)); return;
    default: memcpy(dst, src, count * sizeof(float)); return;
    }
}

/* One run's column piece of kc consecutive tap rows, from tap p0 on, into
 * out (row step NR). The tap's input row and column move with (c, ky, kx) by
 * plain additions; only a tap that reaches the border takes copy_run. */
static void gather_run(const sb_conv_desc *d, const float *planes, const patch_run *run,
                       size_t p0, size_t kc, size_t out_step, float *out)
{
    const ptrdiff_t h = (ptrdiff_t)d->h, w = (ptrdiff_t)d->w, sw = (ptrdiff_t)d->stride_w;
    const ptrdiff_t dh = (ptrdiff_t)d->dil_h, dw = (ptrdiff_t)d->dil_w;
    const size_t len = run->len, kh = d->kh, kw = d->kw, taps = kh * kw;
    const ptrdiff_t span = ((ptrdiff_t)len - 1) * sw;   /* last column minus first */
    size_t c = p0 / taps, ky = p0 % taps / kw, kx = p0 % kw;
    for (size_t p = 0; p < kc; ++p, out += out_step) {
        ptrdiff_t iy = run->iy0 + (ptrdiff_t)ky * dh, ix = run->ix0 + (ptrdiff_t)kx * dw;
        if (iy < 0 || iy >= h || w == 0) {
            memset(out, 0, len * sizeof(float));
        } else {
            const float *row = planes + ((ptrdiff_t)c * h + iy) * w;
            if (ix >= 0 && ix + span < w) {   /* inside the plane: no border */
                if (sw == 1) {
                    copy_floats(out, row + ix, len);
                } else if (sw == 2) {
                    copy_stride2(out, row + ix, len, ix + 2 * (ptrdiff_t)len <= w);
                } else {
                    for (size_t t = 0; t < len; ++t) out[t] = row[ix + (ptrdiff_t)t * sw];
                }
            } else {
                copy_run(out, row, ix, len, d->stride_w, d->w);
            }
        }
        if (++kx == kw) {
            kx = 0;
            if (++ky == kh) ky = 0, ++c;
        }
    }
}

/* sb_gather_fn: the patch matrix's strips, ops->b being the group's first
 * input plane of the image. */
static void gather_patch_strips(const void *ctx, const sb_operands *ops, const sb_tile *tile,
                                size_t p0, size_t kc, size_t strip0, size_t strip_end,
                                float *dst)
{
    const conv_call *call = ctx;
    const sb_conv_desc *d = call->d;
    const size_t nr = (size_t)tile->nr;
    for (size_t strip = strip0; strip < strip_end; ++strip, dst += kc * nr) {
        size_t j0 = strip * nr;
        size_t live = j0 < call->cols ? sb_min_size(call->cols - j0, nr) : 0;
        for (size_t j = j0; j < j0 + live;) {
            patch_run run;
            size_t oy = j / d->out_w, ox = j % d->out_w;
            run.iy0 = (ptrdiff_t)(oy * d->stride_h) - (ptrdiff_t)d->pad_top;
            run.ix0 = (ptrdiff_t)(ox * d->stride_w) - (ptrdiff_t)d->pad_left;
            run.len = sb_min_size(d->out_w - ox, j0 + live - j);
            gather_run(d, ops->b, &run, p0, kc, nr, dst + (j - j0));
            j += run.len;
        }
        if (live < nr)
            for (size_t p = 0; p < kc; ++p)
                memset(dst + p * nr + live, 0, (nr - live) * sizeof(float));
    }
}

/* Product i is image i / G, group i % G. */
static void conv_operands(const void *ctx, size_t i, sb_operands *ops)
{
    const conv_call *call = ctx;
    const sb_conv_desc *d = call->d;
    const size_t n = i / d->groups, g = i % d->groups;
    memset(ops, 0, sizeof *ops);
    ops->packed_a = call->packed ? call->packed + g * call->group_floats : NULL;
    ops->b = d->x ? d->x + (n * d->c + g * call->cin_g) * d->h * d->w : NULL;
    ops->b_row = (ptrdiff_t)(d->h * d->w), ops->b_col = 1;   /* pointwise: the planes */
    ops->c = d->y + (n * d->cout + g * call->cout_g) * call->cols;
    ops->ldc = (ptrdiff_t)call->cols;
    ops->row_bias = d->bias ? d->bias + g * call->cout_g : NULL;
}

static size_t packed_group_floats(const sb_tile *tile, size_t cout_g, size_t k)
{
    return sb_packed_a_floats(tile, cout_g, k);
}

/* The call's plan and run (no memory is touched). */
static int plan_groups(const sb_conv_desc *d, conv_call *call, sb_product_plan *plan,
                       sb_product_run *run, const sb_tile *tile)
{
    memset(call, 0, sizeof *call);
    call->d = d;
    call->cin_g = d->c / d->groups, call->cout_g = d->cout / d->groups;
    call->k = call->cin_g * d->kh * d->kw;
    call->cols = d->out_h * d->out_w;
    call->group_floats = packed_group_floats(tile, call->cout_g, call->k);
    const int pointwise = is_pointwise(d);
    sb_product_desc desc = {0};
    desc.m = call->cout_g, desc.n = call->cols, desc.k = call->k;
    desc.b_row = (ptrdiff_t)(d->h * d->w), desc.b_col = 1;
    desc.b_form = pointwise ? SB_B_MATRIX : SB_B_GATHERED;
    desc.a_packed = 1;
    desc.count = d->n * d->groups;
    desc.tile = tile;
    int status = sb_plan_product(d->isa->gemm, d->mode, &desc, plan);
    if (status != SB_OK) return status;
    memset(run, 0, sizeof *run);
    run->plan = plan;
    run->activation = d->activation;
    run->max_threads = d->max_threads;
    if (!pointwise) run->gather = gather_patch_strips, run->gather_ctx = call;
    run->operands = conv_operands;
    run->operands_ctx = call;
    return SB_OK;
}

static int single_column(const sb_conv_desc *d)
{
    return is_pointwise(d) && d->out_h * d->out_w == 1 && d->c > 0;
}

static int run_groups(const sb_conv_desc *d)
{
    const size_t cin_g = d->c / d->groups, cout_g = d->cout / d->groups;
    const size_t k = cin_g * d->kh * d->kw;
    const sb_tile *tile = sb_conv_tile(d->isa->gemm, cout_g);
    float *own_packed = NULL;
    if (!d->packed && k > 0) {   /* every route reads the weights packed: pack them once */
        size_t bytes;
        if (!sb_mul3_ok(d->groups, packed_group_floats(tile, cout_g, k), sizeof(float), &bytes))
            return SB_ERR_NO_MEMORY;
        own_packed = sb_workspace_get(bytes);
        if (!own_packed) return SB_ERR_NO_MEMORY;
        for (size_t g = 0; g < d->groups; ++g)
            sb_pack_a_whole(tile, cout_g, k, d->weights + g * cout_g * k, (ptrdiff_t)k, 1,
                            own_packed + g * packed_group_floats(tile, cout_g, k));
    }
    const float *packed = d->packed ? d->packed : own_packed;
    int status = SB_OK;
    if (single_column(d)) {
        sb_single_column_run(d, tile, packed);
    } else {
        conv_call call;
        sb_product_plan plan;
        sb_product_run run;
        status = plan_groups(d, &call, &plan, &run, tile);
        call.packed = packed;
        if (status == SB_OK) status = sb_run_products(&run);
    }
    sb_workspace_release(own_packed);
    return status;
}

/* Parses and checks the call, and finds its ISA. */
static int read_conv(const sb_conv2d_args *args, sb_conv_desc *d)
{
    int status = sb_conv_parse(args, d);
    if (status != SB_OK) return status;
    d->isa = sb_isa_supported(d->path);
    return d->isa ? SB_OK : SB_ERR_PATH;
}

int sb_conv2d(const sb_conv2d_args *args)
{
    sb_conv_desc d;
    int status = read_conv(args, &d);
    if (status != SB_OK) return status;
    if (d.n == 0 || d.cout == 0) return SB_OK;
    if (sb_conv_is_depthwise(d.c / d.groups, d.groups)) {
        if (d.packed) d.weights = d.packed, d.packed = NULL;
        return sb_depthwise_run(&d);
    }
    return run_groups(&d);
}

int sb_conv2d_plan(const sb_conv2d_args *args, sb_plan_info *info)
{
    if (!info) return SB_ERR_ARGUMENT;
    sb_conv_desc d;
    int status = read_conv(args, &d);
    if (status != SB_OK) return status;
    memset(info, 0, sizeof *info);
    info->isa_path = d.path;
    if (d.n == 0 || d.cout == 0) return SB_OK;
    if (sb_conv_is_depthwise(d.c / d.groups, d.groups)) return sb_depthwise_describe(&d, info);
    const sb_tile *tile = sb_conv_tile(d.isa->gemm, d.cout / d.groups);
    if (single_column(&d)) {
        sb_single_column_describe(&d, tile, info);
        return SB_OK;
    }
    conv_call call;
    sb_product_plan plan;
    sb_product_run run;
    status = plan_groups(&d, &call, &plan, &run, tile);
    if (status == SB_OK) sb_describe_products(&run, d.path, info);
    return status;
}

size_t sb_conv2d_packed_bytes(int path, size_t cout, size_t cin_per_group, size_t kh, size_t kw,
                              size_t groups)
{
    const sb_isa *isa = sb_isa_get(path);
    if (!isa || !sb_path_built(path) || groups == 0 || cout % groups) return 0;
    /* In 64 bits whatever this build's size_t; each factor is bounded first
     * (2^31), so no product below can overflow; 0 when it cannot be held. */
    const uint64_t bound = (uint64_t)1 << 31;
    if (cin_per_group > bound || kh > bound || kw > bound || cout > bound) return 0;
    uint64_t k = (uint64_t)cin_per_group * kh;
    if (k > bound || (k *= kw) > bound) return 0;
    uint64_t rows = cout;
    if (!sb_conv_is_depthwise(cin_per_group, groups)) {   /* each group padded to whole strips */
        uint64_t cout_g = cout / groups;
        uint64_t mr = (uint64_t)sb_conv_tile(isa->gemm, (size_t)cout_g)->mr;
        rows = groups * ((cout_g + mr - 1) / mr * mr);
    }
    uint64_t floats = rows * k;
    if (floats > (uint64_t)SIZE_MAX / sizeof(float)) return 0;
    return (size_t)floats * sizeof(float);
}

int sb_conv2d_pack(int path, size_t cout, size_t cin_per_group, size_t kh, size_t kw,
                   size_t groups, const float *w, void *packed, size_t packed_size)
{
    const sb_isa *isa = sb_isa_get(path);
    if (!isa || !sb_path_built(path) || groups == 0 || cout % groups) return SB_ERR_ARGUMENT;
    size_t bytes = sb_conv2d_packed_bytes(path, cout, cin_per_group, kh, kw, groups);
    if (packed_size < bytes) return SB_ERR_ARGUMENT;
    if (bytes == 0)   /* nothing to pack, or too large to hold */
        return cout == 0 || cin_per_group == 0 || kh == 0 || kw == 0 ? SB_OK : SB_ERR_ARGUMENT;
    if (!w || !packed) return SB_ERR_ARGUMENT;
    size_t k = cin_per_group * kh * kw;
    if (sb_conv_is_depthwise(cin_per_group, groups)) {
        memcpy(packed, w, bytes);
        return SB_OK;
    }
    size_t cout_g = cout / groups;
    const sb_tile *tile = sb_conv_tile(isa->gemm, cout_g);
    size_t group_floats = packed_group_floats(tile, cout_g, k);
    for (size_t g = 0; g < groups; ++g)
        sb_pack_a_whole(tile, cout_g, k, w + g * cout_g * k, (ptrdiff_t)k, 1,
                        (float *)packed + g * group_floats);
    return SB_OK;
}
