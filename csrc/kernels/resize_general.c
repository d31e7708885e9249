/* ONNX Resize's general forms (resize_general.h). The taps of each output
 * row and column are computed once (in float64, as the header states);
 * threads take whole output rows (nearest without extrapolation: runs of
 * them, nearest_rows.h). */
#include <math.h>
#include <string.h>
#include "samebits.h"
#include "math/activation.h"
#include "framework/step.h"
#include "kernels/resize_general.h"
#include "kernels/nearest_rows.h"

/* One axis's taps: n per output, output o's at [o * n, (o + 1) * n). */
typedef struct {
    int64_t *idx;
    double *c;
    unsigned char *outside;      /* tf_crop_and_resize: x outside [0, L - 1] */
    int64_t n;
} taps;

/* ONNX's cubic weights of the four taps at ratio r. */
static void cubic(double r, double A, double *c)
{
    double r1 = r + 1, q = 1 - r, q1 = q + 1;
    c[0] = ((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A;
    c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    c[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
    c[3] = ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A;
}

/* The antialiasing cubic kernel at distance x (onnx.reference's order). */
static double cubic_kernel(double x, double A)
{
    x = fabs(x);
    double x2 = x * x, x3 = x * x2;
    if (x <= 1) return (A + 2) * x3 - (A + 3) * x2 + 1;
    if (x < 2) return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
    return 0.0;
}

/* The first tap's offset from k, antialiased: floor(-support / min(s, 1)) + 1,
 * support 1 (linear) or 2 (cubic); the taps run to -offset + 1. */
static int64_t antialias_first(int kind, double s)
{
    double sc = s < 1.0 ? s : 1.0;
    return (int64_t)floor(-(kind == SB_RK_CUBIC ? 2.0 : 1.0) / sc) + 1;
}

int64_t sb_resize_general_taps(const sb_resize_general_args *a, double s)
{
    if (a->kind == SB_RK_NEAREST) return 1;
    if (!a->antialias) return a->kind == SB_RK_LINEAR ? 2 : 4;
    if (!(s >= 0x1p-40)) return -1;
    return 2 - 2 * antialias_first(a->kind, s);
}

static double source(const sb_resize_general_args *a, int64_t o, int64_t L, int64_t O, double s,
                     const double *roi)
{
    double od = (double)o, width = s * (double)L;
    switch (a->coord) {
    case SB_RC_TF_CROP_AND_RESIZE:
        return O > 1 ? roi[0] * (double)(L - 1) + od * (roi[1] - roi[0]) * (double)(L - 1) / (double)(O - 1)
                     : 0.5 * (roi[0] + roi[1]) * (double)(L - 1);
    case SB_RC_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)O / width, center = (double)L / 2;
        double offset = center * (1 - adjustment);
        return offset + (od + 0.5) / s - 0.5;
    }
    case SB_RC_PYTORCH_HALF_PIXEL: return width == 1 ? -0.5 : (od + 0.5) / s - 0.5;
    case SB_RC_ALIGN_CORNERS: return width == 1 ? 0.0 : od * (double)(L - 1) / (width - 1);
    case SB_RC_ASYMMETRIC: return od / s;
    default: return (od + 0.5) / s - 0.5;
    }
}

static int64_t clamp(int64_t i, int64_t L) { return i < 0 ? 0 : i >= L ? L - 1 : i; }

/* The taps of every output along one axis; 0 when the axis is left as it is. */
static int axis_taps(const sb_resize_general_args *a, int64_t L, int64_t O, double s, const double *roi,
                     taps *t)
{
    int tf = a->coord == SB_RC_TF_CROP_AND_RESIZE;
    if (O == L && fabs(s - 1.0) <= 1e-9 && (!tf || (roi[0] == 0.0 && roi[1] == 1.0))) return 0;
    int64_t n = t->n;
    double sc = s < 1.0 ? s : 1.0;
    for (int64_t o = 0; o < O; ++o) {
        double x = source(a, o, L, O, s, roi);
        t->outside[o] = tf && !(x >= 0.0 && x <= (double)(L - 1));
        if (!(x > -0x1p50 && x < 0x1p50)) x = x != x ? 0.0 : x < 0 ? -0x1p50 : 0x1p50;
        double fl = floor(x);
        int64_t k = (int64_t)fl;
        double r = x - fl;
        if (r == 0) k -= 1, r = 1;
        int64_t *idx = t->idx + o * n;
        double *c = t->c + o * n;
        if (a->kind == SB_RK_NEAREST) {
            int up = a->nearest == SB_RN_CEIL ? 1 : a->nearest == SB_RN_FLOOR ? r == 1
                   : a->nearest == SB_RN_ROUND_PREFER_CEIL ? r >= 0.5 : r > 0.5;
            idx[0] = clamp(k + up, L), c[0] = 1;
            continue;
        }
        int64_t first;
        if (a->antialias) {
            /* the filter stretched by 1 / min(s, 1), normalized to sum 1 */
            first = antialias_first(a->kind, s);
            double sum = 0;
            for (int64_t i = 0; i < n; ++i) {
                double d = (double)(first + i) - r;
                if (a->kind == SB_RK_LINEAR) {
                    double v = 1 - fabs(d * sc);
                    c[i] = v < 0 ? 0.0 : v > 1 ? 1.0 : v;
                } else {
                    c[i] = cubic_kernel(sc * d, a->cubic_a);
                }
                sum = sum + c[i];
            }
            for (int64_t i = 0; i < n; ++i) c[i] = c[i] / sum;
            first = k + first;
        } else {
            first = a->kind == SB_RK_LINEAR ? k : k - 1;
            if (a->kind == SB_RK_LINEAR) c[0] = 1 - r, c[1] = r;
            else cubic(r, a->cubic_a, c);
        }
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) {
            int64_t j = first + i;
            if (a->exclude_outside && (j < 0 || j >= L)) c[i] = 0;
            sum = sum + c[i];
            idx[i] = clamp(j, L);
        }
        if (a->exclude_outside)
            for (int64_t i = 0; i < n; ++i) c[i] = c[i] / (sum == 0 ? 1.0 : sum);
    }
    return 1;
}

typedef struct {
    const sb_resize_general_args *a;
    const taps *th, *tw;         /* null: the axis is left as it is */
    sb_nearest_map map;          /* nearest: the source of each output row and column */
    sb_step_plan plan;           /* nearest: units are output rows */
} job;

/* The H pass at (row taps, column ix) in float64. */
static double h_pass(const job *j, const float *plane, int64_t oy, int64_t ix)
{
    const sb_resize_general_args *a = j->a;
    const taps *th = j->th;
    if (!th) return (double)plane[oy * a->w + ix];
    const int64_t *idx = th->idx + oy * th->n;
    const double *c = th->c + oy * th->n;
    if (a->kind == SB_RK_NEAREST) return (double)plane[idx[0] * a->w + ix];
    double v = c[0] * (double)plane[idx[0] * a->w + ix];
    for (int64_t i = 1; i < th->n; ++i) v = v + c[i] * (double)plane[idx[i] * a->w + ix];
    return v;
}

static void resize_row(void *ctx, size_t row, int thread_index)
{
    (void)thread_index;
    const job *j = ctx;
    const sb_resize_general_args *a = j->a;
    int64_t oy = (int64_t)(row % (size_t)a->oh);
    size_t plane = row / (size_t)a->oh;
    const float *in = a->x + plane * (size_t)a->h * (size_t)a->w;
    float *out = a->y + row * (size_t)a->ow;
    const taps *tw = j->tw;
    int row_outside = j->th && j->th->outside[oy];
    for (int64_t ox = 0; ox < a->ow; ++ox) {
        double v;
        if (row_outside || (tw && tw->outside[ox])) {
            out[ox] = sbt_canonical(a->extrapolation);
            continue;
        }
        if (!tw) {
            v = h_pass(j, in, oy, ox);
        } else {
            const int64_t *idx = tw->idx + ox * tw->n;
            const double *c = tw->c + ox * tw->n;
            if (a->kind == SB_RK_NEAREST) {
                v = h_pass(j, in, oy, idx[0]);
            } else {
                v = c[0] * h_pass(j, in, oy, idx[0]);
                for (int64_t i = 1; i < tw->n; ++i) v = v + c[i] * h_pass(j, in, oy, idx[i]);
            }
        }
        out[ox] = sbt_canonical((float)v);
    }
}

/* Nearest (no extrapolation: no tf_crop_and_resize) over a chunk's run of
 * output rows (nearest_rows.h): the value is the input float itself, as
 * resize_row's float64 round trip gives it. */
static void nearest_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const job *j = ctx;
    size_t first, end;
    sb_step_units(&j->plan, chunk, &first, &end);
    sb_nearest_rows(&j->map, first, end);
}

/* One axis's table: idx, c, outside, each 8-byte aligned. */
static size_t table_bytes(int64_t O, int64_t n)
{
    return (size_t)O * (size_t)n * (sizeof(int64_t) + sizeof(double)) + (((size_t)O + 7) & ~(size_t)7);
}

size_t sb_resize_general_scratch(const sb_resize_general_args *a)
{
    int64_t nh = sb_resize_general_taps(a, a->scale_h), nw = sb_resize_general_taps(a, a->scale_w);
    if (nh < 1 || nw < 1) return 0;
    return table_bytes(a->oh, nh) + table_bytes(a->ow, nw);
}

static char *table_at(char *at, int64_t O, int64_t n, taps *t)
{
    t->n = n;
    t->idx = (int64_t *)(void *)at;
    at += (size_t)O * (size_t)n * sizeof(int64_t);
    t->c = (double *)(void *)at;
    at += (size_t)O * (size_t)n * sizeof(double);
    t->outside = (unsigned char *)at;
    return at + (((size_t)O + 7) & ~(size_t)7);
}

int sb_resize_general(const sb_resize_general_args *a, void *scratch)
{
    if (!a || a->max_threads < 1 || a->planes < 0 || a->h < 1 || a->w < 1 || a->oh < 0 || a->ow < 0 ||
        a->kind < SB_RK_NEAREST || a->kind > SB_RK_CUBIC || !(a->scale_h > 0) || !(a->scale_w > 0))
        return SB_ERR_ARGUMENT;
    if (a->planes == 0 || a->oh == 0 || a->ow == 0) return SB_OK;
    if (!a->x || !a->y || !scratch) return SB_ERR_ARGUMENT;
    int64_t nh = sb_resize_general_taps(a, a->scale_h), nw = sb_resize_general_taps(a, a->scale_w);
    if (nh < 1 || nw < 1) return SB_ERR_ARGUMENT;
    taps th, tw;
    table_at(table_at(scratch, a->oh, nh, &th), a->ow, nw, &tw);
    job j = {.a = a};
    if (axis_taps(a, a->h, a->oh, a->scale_h, a->roi_h, &th)) j.th = &th;
    if (axis_taps(a, a->w, a->ow, a->scale_w, a->roi_w, &tw)) j.tw = &tw;
    size_t rows = (size_t)a->planes * (size_t)a->oh;
    if (a->kind == SB_RK_NEAREST && a->coord != SB_RC_TF_CROP_AND_RESIZE) {
        const int64_t *rows_idx = j.th ? th.idx : NULL, *cols_idx = j.tw ? tw.idx : NULL;
        j.map = (sb_nearest_map){a->x, a->y, a->h, a->w, a->oh, a->ow, rows_idx, cols_idx,
                                 sb_whole_factor(cols_idx, a->w, a->ow)};
        j.plan = sb_plan_step(rows, sb_units_per_chunk((size_t)a->ow, SB_STEP_CHUNK_ITEMS),
                              (double)rows * (double)a->ow * SB_COST_MOVE);
        sb_run_step(&j.plan, a->max_threads, nearest_chunk, &j);
        return SB_OK;
    }
    double per = (double)(j.th ? nh : 1) * (double)(j.tw ? nw : 1);
    sb_step_plan plan = sb_plan_step(rows, 1, (double)rows * (double)a->ow * SB_COST_RESIZE * per / 4);
    sb_run_step(&plan, a->max_threads, resize_row, &j);
    return SB_OK;
}
