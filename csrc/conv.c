/* 2-D convolution (NCHW) as one blocked matrix product per image and group.
 *
 * A is the group's weights, Cout/G rows by K = C/G*KH*KW columns, the taps
 * ordered (c, ky, kx); B is the patch matrix, K rows by OH*OW columns; C is
 * the group's output planes. The product sums each output's K taps in
 * increasing order from +0, which is the convolution's definition, so every
 * route below gives the definition's bits:
 *
 * - pointwise (1x1 kernel, unit strides, no padding): B is the input itself,
 *   row p being input plane p, in both modes; over a 1x1 input, a
 *   matrix-vector product (single_column.c);
 * - exact mode: the patch matrix is built (im2col), 16 rows per chunk, and
 *   multiplied as an ordinary B;
 * - fast mode: the patch matrix is never built; the framework's packing phase
 *   gathers the patches straight into packed strips (gather_patch_strips),
 *   writing the zero border as it goes.
 *
 * Bias and activation are the framework's per-tile epilogue. A depthwise
 * layer (one input channel per group) runs the direct kernel of depthwise.c. */
#include <string.h>
#include "samebits.h"
#include "sb_internal.h"
#include "conv_internal.h"
#include "strided_copy.h"

#define IM2COL_CHUNK_ROWS 16
#define NS_PER_GATHERED 0.5   /* per patch element written */

typedef struct {
    const sb_conv_desc *d;
    size_t cin_g, cout_g, k, cols;   /* channels per group, K, OH*OW */
    size_t taps;                     /* KH*KW */
} conv_shape;

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }
static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

static conv_shape shape_of(const sb_conv_desc *d)
{
    conv_shape s;
    s.d = d;
    s.cin_g = d->c / d->groups;
    s.cout_g = d->cout / d->groups;
    s.taps = d->kh * d->kw;
    s.k = s.cin_g * s.taps;
    s.cols = d->out_h * d->out_w;
    return s;
}

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
        lo = ix0 < 0 ? min_size((size_t)-ix0, len) : 0;
        hi = ix0 >= (ptrdiff_t)w ? 0 : min_size(len, w - (size_t)ix0);
    } else {
        lo = ix0 < 0 ? min_size(ceil_div((size_t)-ix0, sw), len) : 0;
        hi = ix0 >= (ptrdiff_t)w ? 0 : min_size(len, (w - 1 - (size_t)ix0) / sw + 1);
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

/* ---- fast mode: patches gathered into packed strips ---------------------- */

typedef struct {
    conv_shape s;
    const float *planes;   /* the group's first input plane of this image */
} patch_source;

/* A run: output columns of a strip that lie in one output row; iy0 and ix0
 * are the input row and column of its first column for tap (0, 0). */
typedef struct { ptrdiff_t iy0, ix0; size_t offset, len; } patch_run;

/* Whole-strip copies of a compile-time size become a few vector moves. */
static inline void copy_floats(float *dst, const float *src, size_t count)
{
    switch (count) {
    case 8: memcpy(dst, src, 8 * sizeof(float)); return;
    case 16: memcpy(dst, src, 16 * sizeof(float)); return;
    case 32: memcpy(dst, src, 32 * sizeof(float)); return;
    default: memcpy(dst, src, count * sizeof(float)); return;
    }
}

/* One run's column piece of kc consecutive tap rows, from tap p0 on, into
 * out (row step out_step: NR in a packed strip, OH*OW in the im2col matrix).
 * The tap's input row and column move with (c, ky, kx) by plain additions;
 * only a tap that reaches the border takes copy_run. */
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

static void gather_patch_strips(const void *ctx, size_t p0, size_t kc, size_t strip0,
                                size_t strip_end, size_t nr, float *dst)
{
    const patch_source *src = ctx;
    const sb_conv_desc *d = src->s.d;
    for (size_t strip = strip0; strip < strip_end; ++strip, dst += kc * nr) {
        size_t j0 = strip * nr;
        size_t live = j0 < src->s.cols ? min_size(src->s.cols - j0, nr) : 0;
        for (size_t j = j0; j < j0 + live;) {
            patch_run run;
            size_t oy = j / d->out_w, ox = j % d->out_w;
            run.iy0 = (ptrdiff_t)(oy * d->stride_h) - (ptrdiff_t)d->pad_top;
            run.ix0 = (ptrdiff_t)(ox * d->stride_w) - (ptrdiff_t)d->pad_left;
            run.offset = j - j0;
            run.len = min_size(d->out_w - ox, j0 + live - j);
            gather_run(d, src->planes, &run, p0, kc, nr, dst + run.offset);
            j += run.len;
        }
        if (live < nr)
            for (size_t p = 0; p < kc; ++p)
                memset(dst + p * nr + live, 0, (nr - live) * sizeof(float));
    }
}

/* ---- exact mode: the patch matrix, 16 rows per chunk ---------------------- */

typedef struct {
    conv_shape s;
    const float *planes;
    float *matrix;        /* K x cols */
} im2col_job;

static void im2col_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const im2col_job *job = ctx;
    const sb_conv_desc *d = job->s.d;
    size_t p0 = chunk * IM2COL_CHUNK_ROWS, rows = min_size(job->s.k - p0, IM2COL_CHUNK_ROWS);
    for (size_t oy = 0; oy < d->out_h; ++oy) {   /* each output row is one run */
        patch_run run = {(ptrdiff_t)(oy * d->stride_h) - (ptrdiff_t)d->pad_top,
                         -(ptrdiff_t)d->pad_left, 0, d->out_w};
        gather_run(d, job->planes, &run, p0, rows, job->s.cols,
                   job->matrix + p0 * job->s.cols + oy * d->out_w);
    }
}

static void build_im2col(im2col_job *job, int max_threads)
{
    size_t chunks = ceil_div(job->s.k, IM2COL_CHUNK_ROWS);
    double ns = (double)job->s.k * (double)job->s.cols * NS_PER_GATHERED;
    sb_parallel_run(sb_pool_threads_for(max_threads, ns, chunks), chunks, im2col_chunk, job);
}

/* ---- the call ------------------------------------------------------------ */

/* The path's register tile for this layer (see sb_path_desc.conv_tile). */
static const sb_path_desc *conv_tile(const sb_path_desc *path, size_t cout_g)
{
    return path->conv_tile ? path->conv_tile(cout_g) : path;
}

static size_t packed_group_floats(const sb_path_desc *tile, size_t cout_g, size_t k)
{
    return sb_packed_a_floats(tile, cout_g, k);
}

static int run_groups(const sb_conv_desc *d)
{
    const conv_shape s = shape_of(d);
    const sb_path_desc *tile = conv_tile(sb_path_get(d->path), s.cout_g);
    const int exact = d->mode == SB_MODE_EXACT, pointwise = is_pointwise(d);
    const size_t in_plane = d->h * d->w;
    const int gathered = !exact && !pointwise && s.k > 0;
    const int single_column = pointwise && s.cols == 1 && s.k > 0;
    float *matrix = NULL, *own_packed = NULL;
    if ((gathered || single_column) && !d->packed) {   /* these want A prepacked */
        size_t floats = d->groups * packed_group_floats(tile, s.cout_g, s.k);
        own_packed = sb_workspace_get(floats * sizeof(float));
        if (!own_packed) return SB_ERR_NO_MEMORY;
        for (size_t g = 0; g < d->groups; ++g)
            sb_pack_a(tile, s.cout_g, s.k, d->weights + g * s.cout_g * s.k, (ptrdiff_t)s.k, 1,
                      own_packed + g * packed_group_floats(tile, s.cout_g, s.k));
    }
    const float *packed = d->packed ? d->packed : own_packed;
    if (single_column) {
        sb_single_column_run(d, tile, packed);
        sb_workspace_release(own_packed);
        return SB_OK;
    }
    if (exact && !pointwise && s.k > 0) {
        size_t floats = s.k * s.cols;
        if (floats / s.cols != s.k || floats > ((size_t)-1) / sizeof(float)) return SB_ERR_NO_MEMORY;
        matrix = sb_workspace_get(floats * sizeof(float));
        if (!matrix) return SB_ERR_NO_MEMORY;
    }
    int status = SB_OK;
    for (size_t n = 0; n < d->n && status == SB_OK; ++n) {
        for (size_t g = 0; g < d->groups && status == SB_OK; ++g) {
            const float *planes = d->x ? d->x + (n * d->c + g * s.cin_g) * in_plane : NULL;
            sb_gemm_args args;
            memset(&args, 0, sizeof args);
            args.path = d->path, args.mode = d->mode, args.max_threads = d->max_threads;
            args.tile = tile;
            args.m = s.cout_g, args.n = s.cols, args.k = s.k;
            if (packed) {
                args.packed_a = packed + g * packed_group_floats(tile, s.cout_g, s.k);
            } else {
                args.a = d->weights + g * s.cout_g * s.k, args.a_row = (ptrdiff_t)s.k,
                args.a_col = 1;
            }
            args.c = d->y + (n * d->cout + g * s.cout_g) * s.cols;
            args.ldc = (ptrdiff_t)s.cols;
            args.row_bias = d->bias ? d->bias + g * s.cout_g : NULL;
            args.activation = d->activation;
            patch_source source = {s, planes};
            if (s.k == 0) {
                /* no taps: every output is +0 before the epilogue */
            } else if (pointwise) {
                args.b = planes, args.b_row = (ptrdiff_t)in_plane, args.b_col = 1;
            } else if (exact) {
                im2col_job job = {s, planes, matrix};
                build_im2col(&job, d->max_threads);
                args.b = matrix, args.b_row = (ptrdiff_t)s.cols, args.b_col = 1;
            } else {
                args.gather_b = gather_patch_strips, args.gather_ctx = &source;
            }
            status = sb_gemm_run(&args);
        }
    }
    sb_workspace_release(matrix);
    sb_workspace_release(own_packed);
    return status;
}

int sb_conv2d_argv(const int64_t *args)
{
    sb_conv_desc d;
    int status = sb_conv_parse(args, &d);
    if (status != SB_OK) return status;
    if (!sb_path_supported(d.path)) return SB_ERR_PATH;
    if (d.n == 0 || d.cout == 0) return SB_OK;
    if (sb_conv_is_depthwise(d.c / d.groups, d.groups)) {
        if (d.packed) d.weights = d.packed, d.packed = NULL;
        return sb_depthwise_run(&d);
    }
    return run_groups(&d);
}

size_t sb_conv2d_packed_bytes(int path, size_t cout, size_t cin_per_group, size_t kh, size_t kw,
                              size_t groups)
{
    if (!sb_path_built(path) || groups == 0 || cout % groups) return 0;
    /* In 64 bits whatever this build's size_t; each factor is bounded first
     * (2^31), so no product below can overflow; 0 when it cannot be held. */
    const uint64_t bound = (uint64_t)1 << 31;
    if (cin_per_group > bound || kh > bound || kw > bound || cout > bound) return 0;
    uint64_t k = (uint64_t)cin_per_group * kh;
    if (k > bound || (k *= kw) > bound) return 0;
    uint64_t rows = cout;
    if (!sb_conv_is_depthwise(cin_per_group, groups)) {   /* each group padded to whole strips */
        uint64_t cout_g = cout / groups;
        uint64_t mr = (uint64_t)conv_tile(sb_path_get(path), (size_t)cout_g)->mr;
        rows = groups * ((cout_g + mr - 1) / mr * mr);
    }
    uint64_t floats = rows * k;
    if (floats > (uint64_t)SIZE_MAX / sizeof(float)) return 0;
    return (size_t)floats * sizeof(float);
}

int sb_conv2d_pack(int path, size_t cout, size_t cin_per_group, size_t kh, size_t kw,
                   size_t groups, const float *w, void *packed, size_t packed_size)
{
    if (!sb_path_built(path) || groups == 0 || cout % groups) return SB_ERR_ARGUMENT;
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
    const sb_path_desc *desc = conv_tile(sb_path_get(path), cout_g);
    size_t group_floats = packed_group_floats(desc, cout_g, k);
    for (size_t g = 0; g < groups; ++g)
        sb_pack_a(desc, cout_g, k, w + g * cout_g * k, (ptrdiff_t)k, 1,
                  (float *)packed + g * group_floats);
    return SB_OK;
}
