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
 * Windows of 2 or 3 columns at column stride 1 or 2, or 4 to 64 at stride 1
 * (unit dilation across columns), and of 1 to 8 rows take a faster route: the fold of take is
 * associative (isa/pool.h), so each input row is folded across once into a
 * row of its windows' row maxima (h), kept in a ring of as many rows as the
 * window has, and each output row folds the h rows of its window's inside
 * rows in order, then stores a NaN as 0x7FC00000. A column of h whose window
 * has no inside tap holds -FLT_MAX (then so does every output of that
 * column, as the rule says); the few columns at a row's ends whose windows
 * are partly inside fold their inside taps one at a time. The same
 * comparisons of the same taps in (ky, kx) order, so the same bits as the
 * passes, with every input row read once per window width instead of once
 * per window tap.
 *
 * Small planes at strides of 1 or 2 take the plane route (max_pool_planes below).
 *
 * The plane route folds with first (v > b ? v : b, from -inf; isa/pool.h)
 * where the rule says take: one max instruction on x86 where take is four.
 * The two give the same output wherever first's is above -inf; an output
 * row holding -inf (a window of NaN taps only, or whose largest tap is
 * -inf) is computed again on the passes, with take. The fold route keeps
 * take (with first, SqueezeNet's 64 x 111 x 111 pool ran no faster alone
 * and 7-20% slower in the network).
 *
 * Work is split into chunks of whole output rows (the plane route: whole
 * planes), about 16384 outputs each: a function of the shape only, and each
 * output is written by one chunk. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "samebits.h"
#include "framework/geometry.h"
#include "framework/memory.h"
#include "framework/step.h"
#include "isa/isa.h"
#include "isa/pool_template.h"
#include "kernels/strided_copy.h"

#define STACK_KW 64                      /* column tables up to this width live on the stack */
#define STACK_FOLD_W 512                 /* fold rows up to this width live on the stack */
#define FOLD_MAX_KH 8                    /* the fold route's ring: one row per window row */

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
    int64_t inner_lo, inner_hi;   /* fold route: the outputs whose kw taps are all inside */
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

/* Whether the fold route serves this pooling (see the top). */
static int fold_route(const max_pool_ctx *c)
{
    return c->dw == 1 && c->kh <= FOLD_MAX_KH && c->kw >= 2 &&
           (((c->sw == 1 || c->sw == 2) && c->kw <= 3) || (c->sw == 1 && c->kw <= 64));
}

/* Input row `row` folded across into h[0, ow): each output column's inside
 * taps in kx order (NaN when all are NaN), -FLT_MAX where there is none. */
static void fold_across(const max_pool_ctx *c, const float *row, float *h)
{
    int64_t lo = c->inner_lo, hi = c->inner_hi;
    if (hi > lo && c->kw <= 3) {
        c->pool->hfold[c->kw - 2][c->sw - 1](row + (lo * c->sw - c->pl), h + lo, (size_t)(hi - lo));
    } else if (hi > lo) {   /* unit stride, wider: taps 0-2 folded, then one pass per tap */
        const float *first = row + (lo - c->pl);
        c->pool->hfold[1][0](first, h + lo, (size_t)(hi - lo));
        for (int64_t kx = 3; kx < c->kw; ++kx) c->pool->pass(h + lo, first + kx, (size_t)(hi - lo));
    }
    for (int64_t ox = 0; ox < c->ow; ++ox) {   /* the ends: [0, lo) and [hi, ow) */
        if (ox == lo && hi > lo) ox = hi;
        if (ox >= c->ow) break;
        float m = canonical_nan.f;
        int inside = 0;
        for (int64_t kx = 0; kx < c->kw; ++kx)
            if (c->cols[2 * kx] <= ox && ox < c->cols[2 * kx + 1])
                m = pool_take(m, row[ox * c->sw + kx - c->pl]), inside = 1;
        h[ox] = inside ? m : -FLT_MAX;
    }
}

/* The fold route's ring: up to FOLD_MAX_KH folded input rows, each named by
 * its (plane, input row) key, -1 when empty. */
typedef struct {
    float *rows[FOLD_MAX_KH];
    int64_t key[FOLD_MAX_KH];
} fold_ring;

/* Output row r on the fold route: window rows [ky_lo, ky_hi) inside. */
static void fold_row(const max_pool_ctx *c, fold_ring *ring, size_t plane, int64_t top,
                     int64_t ky_lo, int64_t ky_hi, float *best)
{
    const float *x_plane = c->x + plane * (size_t)c->h * (size_t)c->w;
    int64_t want[FOLD_MAX_KH];
    int count = 0;
    for (int64_t ky = ky_lo; ky < ky_hi; ++ky)
        want[count++] = (int64_t)plane * c->h + top + ky * c->dh;
    const float *rows[FOLD_MAX_KH];
    for (int i = 0; i < count; ++i) {
        int slot = -1;
        for (int s = 0; s < (int)c->kh && slot < 0; ++s)
            if (ring->key[s] == want[i]) slot = s;
        if (slot < 0) {   /* a slot this window does not read */
            for (int s = 0; s < (int)c->kh && slot < 0; ++s) {
                int needed = 0;
                for (int j = 0; j < count; ++j) needed |= ring->key[s] == want[j];
                if (!needed) slot = s;
            }
            int64_t iy = want[i] - (int64_t)plane * c->h;
            fold_across(c, x_plane + (size_t)iy * (size_t)c->w, ring->rows[slot]);
            ring->key[slot] = want[i];
        }
        rows[i] = ring->rows[slot];
    }
    /* rows 0-2 folded (NaN stored canonical), then one pass per row: a
     * canonical NaN stays one, as take keeps best when v is NaN */
    c->pool->vfold[(count < 3 ? count : 3) - 1](rows, best, (size_t)c->ow);
    for (int i = 3; i < count; ++i) c->pool->pass(best, rows[i], (size_t)c->ow);
}

static void fill(float *dst, size_t n, float value)
{
    for (size_t i = 0; i < n; ++i) dst[i] = value;
}

/* Output row r; ring: the fold route's rows, or null. */
static void max_pool_row(const max_pool_ctx *c, size_t r, fold_ring *ring)
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
    if (ring) {
        fold_row(c, ring, plane, top, ky_lo, ky_hi, best);
        return;
    }
    const float *x_plane = c->x + plane * (size_t)c->h * (size_t)c->w;
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
    float stack_rows[FOLD_MAX_KH * STACK_FOLD_W];
    float *fold_rows = NULL;
    fold_ring ring;
    for (int s = 0; s < FOLD_MAX_KH; ++s) ring.rows[s] = NULL, ring.key[s] = -1;
    if (fold_route(c)) {   /* kh rows of ow floats (ow <= SIZE_MAX / 4 already) */
        size_t ow = (size_t)c->ow;
        fold_rows = ow <= STACK_FOLD_W ? stack_rows
                    : ow < SIZE_MAX / (FOLD_MAX_KH * sizeof(float))
                        ? (float *)sb_workspace_get((size_t)c->kh * ow * sizeof(float)) : NULL;
        for (int s = 0; s < (int)c->kh && fold_rows; ++s) ring.rows[s] = fold_rows + (size_t)s * ow;
    }
    for (size_t r = r0; r < r1; ++r) max_pool_row(c, r, fold_rows ? &ring : NULL);
    if (fold_rows && fold_rows != stack_rows) sb_workspace_release(fold_rows);
}

/* The plane route: unit dilations, strides of 1 or 2 (column stride 2 for
 * windows of 2 or 3 columns, the row folds that exist), windows that each
 * have at least one inside tap (each padding < the window), and a padded
 * plane of at most PLANE_MAX floats. The plane is stored padded with NaN,
 * which take ignores exactly as it ignores a tap outside the input, hn x wp:
 * the rows and columns the windows cover (input rows or columns beyond them,
 * which no window reads, are left out), wp even at column stride 2. Then the
 * row fold runs once over the whole padded plane as one row: at column
 * stride 2 every second column, so across[iy * wp/2 + ox] is row iy's fold
 * at output column ox (wp even keeps the pattern from row to row); the
 * outputs between the rows are computed and dropped. The column fold runs
 * once too, its rows wa = wp / sw apart: best[q] folds across[q + ky * wa],
 * and output (oy, ox) is best[oy * sh * wa + ox] (at row stride 2 every
 * second row of best is dropped). The same takes of the same taps in
 * (ky, kx) order as the fold route, in a few long vector passes where
 * YOLO's SPPF (5 x 5 over 10 x 10 or 20 x 20 planes) ran hundreds of calls
 * on rows of 6 to 20, and SqueezeNet's 3 x 3 / 2 pools over 27 x 27 planes
 * ran rows of 13 one output at a time. */
#define PLANE_MAX 4096   /* padded, across and best: 48 KiB of workspace */

typedef struct { size_t hn, wn, wp, wa; } plane_shape;

static plane_shape plane_shape_of(const max_pool_ctx *c)
{
    plane_shape p;
    p.hn = (size_t)((c->oh - 1) * c->sh + c->kh);
    p.wn = (size_t)((c->ow - 1) * c->sw + c->kw);
    p.wp = c->sw == 2 ? (p.wn + 1) / 2 * 2 : p.wn;
    p.wa = p.wp / (size_t)c->sw;
    return p;
}

static int plane_route(const max_pool_ctx *c)
{
    if (c->dh != 1 || c->dw != 1 || c->sh < 1 || c->sh > 2 || c->sw < 1 || c->sw > 2 ||
        c->kw < 2 || c->kh > 64 || c->kw > 64 || (c->sw == 2 && c->kw > 3))
        return 0;
    if (c->oh > PLANE_MAX || c->ow > PLANE_MAX) return 0;   /* keeps the products below small */
    const plane_shape p = plane_shape_of(c);
    /* the first and last windows reach inside, so every window does (the
     * inside is contiguous and windows advance by at most their size) */
    return p.hn * p.wp + 1 <= PLANE_MAX && c->pt < c->kh && c->pl < c->kw &&
           (int64_t)p.hn - c->pt - c->h < c->kh && (int64_t)p.wn - c->pl - c->w < c->kw;
}

static void max_pool_planes(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const max_pool_ctx *c = (const max_pool_ctx *)ctx;
    const size_t kh = (size_t)c->kh, kw = (size_t)c->kw, oh = (size_t)c->oh, ow = (size_t)c->ow;
    const size_t h = (size_t)c->h, w = (size_t)c->w, sh = (size_t)c->sh, sw = (size_t)c->sw;
    const plane_shape ps = plane_shape_of(c);
    const size_t hn = ps.hn, wp = ps.wp, wa = ps.wa;
    size_t p0, p1;
    sb_step_units(&c->plan, chunk, &p0, &p1);
    float *padded = (float *)sb_workspace_get(3 * PLANE_MAX * sizeof(float));
    if (!padded) {   /* no memory: the same outputs row by row, on the passes */
        for (size_t r = p0 * oh; r < p1 * oh; ++r) max_pool_row(c, r, NULL);
        return;
    }
    float *across = padded + PLANE_MAX, *best = across + PLANE_MAX;
    for (size_t i = 0; i < hn * wp + 1; ++i) padded[i] = canonical_nan.f;
    /* the input rows and columns some window covers */
    const size_t rows_in = hn - (size_t)c->pt < h ? hn - (size_t)c->pt : h;
    const size_t cols_in = wp - (size_t)c->pl < w ? wp - (size_t)c->pl : w;
    for (size_t p = p0; p < p1; ++p) {
        const float *x = c->x + p * h * w;
        for (size_t iy = 0; iy < rows_in; ++iy)   /* the inside; the NaN border stays */
            copy_short(padded + (iy + (size_t)c->pt) * wp + (size_t)c->pl, x + iy * w, cols_in);
        /* across[j]: taps kx of padded[sw * j + kx], for every j a window can start at */
        const size_t na = sw == 1 ? hn * wp - kw + 1 : hn * wa;
        c->pool->first_hfold[kw >= 3][sw - 1](padded, across, na);
        for (size_t kx = 3; kx < kw; ++kx) (void)c->pool->first_pass(across, padded + kx, na);
        /* best[q]: rows ky of across, wa apart */
        const size_t nb = (oh - 1) * sh * wa + ow;
        const float *rows[3] = {across, across + (kh > 1) * wa, across + (kh > 2) * 2 * wa};
        int ninf = c->pool->first_vfold[(kh < 3 ? kh : 3) - 1](rows, best, nb);
        for (size_t ky = 3; ky < kh; ++ky) ninf = c->pool->first_pass(best, across + ky * wa, nb);
        float *y = c->y + p * oh * ow;
        for (size_t oy = 0; oy < oh; ++oy) copy_short(y + oy * ow, best + oy * sh * wa, ow);
        if (ninf)   /* (best's dropped rows may be the -inf ones: each output row looked at) */
            for (size_t oy = 0; oy < oh; ++oy)
                for (size_t ox = 0; ox < ow; ++ox)
                    if (y[oy * ow + ox] == -INFINITY) {
                        max_pool_row(c, p * oh + oy, NULL);   /* with take */
                        break;
                    }
    }
    sb_workspace_release(padded);
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

    /* the outputs whose kw taps are all inside: the fold route's kernel */
    int64_t inner_lo = 0, inner_hi = ow;
    for (int64_t kx = 0; kx < kw; ++kx) {
        if (cols[2 * kx] > inner_lo) inner_lo = cols[2 * kx];
        if (cols[2 * kx + 1] < inner_hi) inner_hi = cols[2 * kx + 1];
    }
    if (inner_hi < inner_lo) inner_hi = inner_lo;
    max_pool_ctx ctx = {x, y, h, w, oh, ow, kh, kw, sh, sw, dh, dw, pt, cols, pl, rows,
                        sb_isa_get(sb_path_best())->pool, inner_lo, inner_hi, {0}};
    double est_ns = (double)total_out * (double)kh * (double)kw * SB_COST_POOL_TAP;
    if (plane_route(&ctx)) {   /* units: planes */
        ctx.plan = sb_plan_step((size_t)planes,
                                sb_units_per_chunk((size_t)plane_out, SB_STEP_CHUNK_ITEMS), est_ns);
        sb_run_step(&ctx.plan, threads, max_pool_planes, &ctx);
    } else {                   /* units: output rows */
        ctx.plan = sb_plan_step(rows, sb_units_per_chunk((size_t)ow, SB_STEP_CHUNK_ITEMS), est_ns);
        sb_run_step(&ctx.plan, threads, max_pool_chunk, &ctx);
    }
    if (cols != stack_cols) sb_workspace_release(cols);
    return SB_OK;
}
