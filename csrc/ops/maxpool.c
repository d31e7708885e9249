/* 2-D max pooling, NCHW, contiguous input and output (docs/maxpool.md).
 *
 * The rule, per output: its taps are the window positions
 * (oy*stride_h + ky*dil_h - pad_top, ox*stride_w + kx*dil_w - pad_left) that
 * fall inside the input, taken in row-major order (ky, then kx). NaN taps are
 * ignored; a later tap replaces the running best only when strictly greater,
 * so the first of equal taps wins (-0 before +0 stays -0). A window whose
 * inside taps are all NaN gives 0x7FC00000; a window with no inside tap
 * gives -FLT_MAX.
 *
 * How: the output row itself is the running best of its OW windows, NaN
 * meaning "no tap yet". For each inside row ky of the window (in order) and
 * each kx (in order), one pass over the outputs whose tap kx is inside the
 * input updates best = (v > best || best is NaN) ? v : best. Every output
 * thus sees its own taps in (ky, kx) order, whatever the pass structure; with
 * unit column stride a pass is a plain loop over two contiguous rows, which
 * the compiler vectorises (compare, compare, or, blend). The lanes are
 * independent outputs, so vectorising changes no bit. A final pass turns NaN
 * into -FLT_MAX (no inside tap) or 0x7FC00000 (all inside taps NaN).
 *
 * The common 3x3 and 2x2 windows with column stride 2 (unit dilation across
 * columns) take a faster route for the rows whose window lies inside the
 * input vertically: each of the window's input rows is split into its even
 * and odd columns, so that every tap of the outputs whose window lies inside
 * horizontally too is a unit-stride read, and those outputs are computed in
 * one loop holding each output's running best in a register, its taps in
 * (ky, kx) order; the few outputs at the row's ends take every inside tap in
 * the same order one output at a time. The same comparisons in the same
 * order, so the same bits as the passes.
 *
 * Work is split into chunks of whole output rows, about 16384 outputs each:
 * a function of the shape only, and each output is written by one chunk. */
#include <float.h>
#include "samebits.h"
#include "framework/geometry.h"
#include "framework/memory.h"
#include "framework/step.h"
#include "isa/isa.h"
#include "isa/pool_template.h"

#define STACK_KW 64                      /* column tables up to this width live on the stack */
#define STACK_SPLIT_W 512                /* split rows up to this width live on the stack */

typedef union { uint32_t u; float f; } bits32;
static const bits32 canonical_nan = {0x7fc00000u};

typedef struct {
    const float *x;
    float *y;
    int64_t h, w, oh, ow, kh, kw, sh, sw, dh, dw, pt;
    const int64_t *cols;      /* per kx: [lo, hi) of the outputs whose tap kx is inside */
    int64_t pl;
    size_t rows;              /* N*C*OH output rows */
    const sb_pool_config *pool;   /* the best path's row kernels (no bit depends on the path) */
    sb_step_plan plan;        /* units: output rows */
} max_pool_ctx;

static void update_stride2(float *restrict best, const float *restrict src, size_t n)
{
    for (size_t i = 0; i < n; ++i) best[i] = pool_take(best[i], src[2 * i]);
}

static void update_strided(float *restrict best, const float *restrict src, size_t n,
                           size_t stride)
{
    for (size_t i = 0; i < n; ++i) best[i] = pool_take(best[i], src[i * stride]);
}

static int column_has_inside_tap(const max_pool_ctx *c, int64_t ox)
{
    for (int64_t kx = 0; kx < c->kw; ++kx)
        if (c->cols[2 * kx] <= ox && ox < c->cols[2 * kx + 1]) return 1;
    return 0;
}

/* Output ox from every inside tap, one at a time, in (ky, kx) order: the
 * ends of a row on the split route. */
static float one_output(const max_pool_ctx *c, const float *x_plane, int64_t top, int64_t ox)
{
    float best = canonical_nan.f;
    for (int64_t ky = 0; ky < c->kh; ++ky) {
        const float *row = x_plane + (size_t)(top + ky * c->dh) * (size_t)c->w;
        for (int64_t kx = 0; kx < c->kw; ++kx)
            if (c->cols[2 * kx] <= ox && ox < c->cols[2 * kx + 1])
                best = pool_take(best, row[ox * c->sw + kx * c->dw - c->pl]);
    }
    return best;
}

/* The split route for output row oy of one plane (its window's kh rows all
 * inside the input); split_rows: room for kh rows of w + 2 floats. */
static void split_row(const max_pool_ctx *c, const float *x_plane, int64_t top, float *best,
                      float *split_rows)
{
    const size_t w = (size_t)c->w, half = (w + 1) / 2, ow = (size_t)c->ow;
    const float *split[3];
    for (int64_t ky = 0; ky < c->kh; ++ky) {
        const float *row = x_plane + (size_t)(top + ky * c->dh) * w;
        float *even = split_rows + (size_t)ky * (w + 2), *odd = even + half;
        for (size_t t = 0; t < w / 2; ++t) even[t] = row[2 * t], odd[t] = row[2 * t + 1];
        if (w & 1) even[w / 2] = row[w - 1];
        split[ky] = even;
    }
    /* tap kx of output ox: column 2*ox + d, d = kx - pl, in phase d mod 2 at
     * index ox + floor(d / 2) */
    ptrdiff_t base[3];
    int64_t lo = 0, hi = c->ow;
    for (int64_t kx = 0; kx < c->kw; ++kx) {
        int64_t d = kx - c->pl;
        int64_t q = d >= 0 ? d / 2 : -((-d + 1) / 2);
        base[kx] = (ptrdiff_t)((d - 2 * q) * (int64_t)half + q);
        if (c->cols[2 * kx] > lo) lo = c->cols[2 * kx];
        if (c->cols[2 * kx + 1] < hi) hi = c->cols[2 * kx + 1];
    }
    size_t a = (size_t)lo, b = hi > lo ? (size_t)hi : a;
    const float *taps[9];   /* in (ky, kx) order */
    for (int64_t ky = 0; ky < c->kh; ++ky)
        for (int64_t kx = 0; kx < c->kw; ++kx) taps[ky * c->kw + kx] = split[ky] + base[kx];
    (c->kh == 3 ? c->pool->taps9 : c->pool->taps4)(taps, best, a, b);
    for (size_t ox = 0; ox < ow; ++ox) {   /* the ends: [0, a) and [b, ow) */
        if (ox == a) ox = b;
        if (ox >= ow) break;
        float m = one_output(c, x_plane, top, (int64_t)ox);
        best[ox] = m == m ? m : column_has_inside_tap(c, (int64_t)ox) ? canonical_nan.f : -FLT_MAX;
    }
}

/* Whether the split route serves this pooling: 3x3 or 2x2 windows, column
 * stride 2, unit column dilation. */
static int split_route(const max_pool_ctx *c)
{
    return c->sw == 2 && c->dw == 1 && c->kh == c->kw && (c->kh == 3 || c->kh == 2);
}

static void fill(float *dst, size_t n, float value)
{
    for (size_t i = 0; i < n; ++i) dst[i] = value;
}

/* Output row r; split_rows: room for the split route's rows, or null. */
static void max_pool_row(const max_pool_ctx *c, size_t r, float *split_rows)
{
    size_t plane = r / (size_t)c->oh;
    int64_t oy = (int64_t)(r % (size_t)c->oh);
    size_t ow = (size_t)c->ow;
    float *best = c->y + r * ow;
    /* Inside window rows: 0 <= oy*sh + ky*dh - pt < h. */
    int64_t top = oy * c->sh - c->pt;
    int64_t ky_lo = top >= 0 ? 0 : (-top + c->dh - 1) / c->dh;
    int64_t ky_hi = top > c->h - 1 ? 0 : (c->h - 1 - top) / c->dh + 1;
    if (ky_hi > c->kh) ky_hi = c->kh;
    if (ky_lo >= ky_hi) {
        fill(best, ow, -FLT_MAX);
        return;
    }
    const float *x_plane = c->x + plane * (size_t)c->h * (size_t)c->w;
    if (split_rows && ky_lo == 0 && ky_hi == c->kh) {
        split_row(c, x_plane, top, best, split_rows);
        return;
    }
    fill(best, ow, canonical_nan.f);
    for (int64_t ky = ky_lo; ky < ky_hi; ++ky) {
        const float *row = x_plane + (size_t)(top + ky * c->dh) * (size_t)c->w;
        for (int64_t kx = 0; kx < c->kw; ++kx) {
            int64_t lo = c->cols[2 * kx], hi = c->cols[2 * kx + 1];
            if (lo >= hi) continue;
            const float *src = row + (lo * c->sw + kx * c->dw - c->pl);
            size_t n = (size_t)(hi - lo);
            if (c->sw == 1)
                c->pool->pass(best + lo, src, n);
            else if (c->sw == 2)
                update_stride2(best + lo, src, n);
            else
                update_strided(best + lo, src, n, (size_t)c->sw);
        }
    }
    for (size_t ox = 0; ox < ow; ++ox) {
        float b = best[ox];
        if (b != b) best[ox] = column_has_inside_tap(c, (int64_t)ox) ? canonical_nan.f : -FLT_MAX;
    }
}

static void max_pool_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const max_pool_ctx *c = (const max_pool_ctx *)ctx;
    size_t r0, r1;
    sb_step_units(&c->plan, chunk, &r0, &r1);
    float stack_rows[3 * (STACK_SPLIT_W + 2)];
    float *split_rows = NULL;
    if (split_route(c)) {   /* kh rows of w + 2 floats (w <= SIZE_MAX / 4 already) */
        size_t w = (size_t)c->w;
        split_rows = w <= STACK_SPLIT_W ? stack_rows
                     : w < SIZE_MAX / (3 * sizeof(float)) - 2
                         ? (float *)sb_workspace_get(3 * (w + 2) * sizeof(float)) : NULL;
    }
    for (size_t r = r0; r < r1; ++r) max_pool_row(c, r, split_rows);
    if (split_rows && split_rows != stack_rows) sb_workspace_release(split_rows);
}

/* a * b, or 0 when it exceeds limit (a, b >= 0). */
static int mul_within(uint64_t a, uint64_t b, uint64_t limit, uint64_t *result)
{
    if (a != 0 && b > limit / a) return 0;
    *result = a * b;
    return 1;
}

int sb_max_pool2d(const sb_max_pool2d_args *args)
{
    if (!args) return SB_ERR_ARGUMENT;
    int64_t n = args->n, ch = args->c, h = args->h, w = args->w;
    int64_t kh = args->kh, kw = args->kw, sh = args->stride_h, sw = args->stride_w;
    int64_t dh = args->dil_h, dw = args->dil_w;
    int64_t pt = args->pad_top, pb = args->pad_bottom, pl = args->pad_left, pr = args->pad_right;
    int64_t threads = args->max_threads;
    const float *x = (const float *)(intptr_t)args->x;
    float *y = (float *)(intptr_t)args->y;
    if (n < 0 || ch < 0 || n > SB_MAX_SIZE || ch > SB_MAX_SIZE || threads < 1)
        return SB_ERR_ARGUMENT;
    /* Checks every geometry argument against [0, SB_MAX_SIZE] (kernel,
     * stride and dilation >= 1); -1 when one is out of range. */
    int64_t oh = sb_window_output_size(h, pt, pb, kh, dh, sh);
    int64_t ow = sb_window_output_size(w, pl, pr, kw, dw, sw);
    if (oh < 1 || ow < 1) return SB_ERR_ARGUMENT;
    /* Element counts must be addressable (bytes within size_t). */
    const uint64_t limit = (uint64_t)(SIZE_MAX / sizeof(float));
    uint64_t planes, plane_in, total_in, plane_out, total_out;
    if (!mul_within((uint64_t)n, (uint64_t)ch, limit, &planes) ||
        !mul_within((uint64_t)h, (uint64_t)w, limit, &plane_in) ||
        !mul_within(planes, plane_in, limit, &total_in) ||
        !mul_within((uint64_t)oh, (uint64_t)ow, limit, &plane_out) ||
        !mul_within(planes, plane_out, limit, &total_out))
        return SB_ERR_ARGUMENT;
    if (planes == 0) return SB_OK;                  /* empty output */
    if (!y) return SB_ERR_ARGUMENT;
    if (total_in != 0 && !x) return SB_ERR_ARGUMENT;
    size_t rows = (size_t)planes * (size_t)oh;
    if (total_in == 0) {                            /* H or W is 0: no window has a tap */
        fill(y, (size_t)total_out, -FLT_MAX);
        return SB_OK;
    }

    /* Per kx, the outputs whose tap kx is inside: 0 <= ox*sw + kx*dw - pl < w. */
    int64_t stack_cols[2 * STACK_KW];
    int64_t *cols = stack_cols;
    if (kw > STACK_KW) {
        if ((uint64_t)kw > (uint64_t)(SIZE_MAX / (2 * sizeof(int64_t)))) return SB_ERR_NO_MEMORY;
        cols = (int64_t *)sb_workspace_get((size_t)kw * 2 * sizeof(int64_t));
        if (!cols) return SB_ERR_NO_MEMORY;
    }
    for (int64_t kx = 0; kx < kw; ++kx) {
        int64_t left = kx * dw - pl;                /* input column of output 0 */
        int64_t lo = left >= 0 ? 0 : (-left + sw - 1) / sw;
        int64_t hi = left > w - 1 ? 0 : (w - 1 - left) / sw + 1;
        if (hi > ow) hi = ow;
        if (lo > hi) lo = hi;
        cols[2 * kx] = lo;
        cols[2 * kx + 1] = hi;
    }

    max_pool_ctx ctx = {x, y, h, w, oh, ow, kh, kw, sh, sw, dh, dw, pt, cols, pl, rows,
                        sb_isa_get(sb_path_best())->pool, {0}};
    double est_ns = (double)total_out * (double)kh * (double)kw * SB_COST_POOL_TAP;
    ctx.plan = sb_plan_step(rows, sb_units_per_chunk((size_t)ow, SB_STEP_CHUNK_ITEMS), est_ns);
    sb_run_step(&ctx.plan, threads, max_pool_chunk, &ctx);
    if (cols != stack_cols) sb_workspace_release(cols);
    return SB_OK;
}
