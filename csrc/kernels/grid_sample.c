/* GridSample (grid_sample.h): one output row (n, c, ho) per unit of work. */
#include <math.h>
#include <string.h>
#include "samebits.h"
#include "framework/step.h"
#include "math/activation.h"
#include "kernels/grid_sample.h"

/* x reflected into [lo, hi] (in double, as onnx.reference does). */
static double reflect(double x, double lo, double hi)
{
    double span = hi - lo;
    if (!(span > 0)) return lo;
    if (x < lo) {
        double d = lo - x;
        double k = floor(d / span), r = d - k * span;
        return fmod(k, 2.0) == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double d = x - hi;
        double k = floor(d / span), r = d - k * span;
        return fmod(k, 2.0) == 0 ? hi - r : lo + r;
    }
    return x;
}

typedef struct {
    const sb_grid_sample_args *a;
    float lo_h, hi_h, lo_w, hi_w;   /* the reflection and validity bounds */
    float lo_d, hi_d;               /* (a volume) */
} job;

/* The pixel coordinate of normalized g on an axis of length L. */
static float unnormalize(float g, int64_t L, int align)
{
    float l = (float)L;
    return align ? ((g + 1.0f) / 2.0f) * (l - 1.0f) : ((g + 1.0f) * l - 1.0f) / 2.0f;
}

/* The coordinate after the padding rule for points outside the bounds. */
static float outside(const sb_grid_sample_args *a, float v, int64_t L, float lo, float hi)
{
    if (!(v < lo || v > hi)) return v;
    if (a->padding == SB_GS_BORDER) return v < 0.0f ? 0.0f : v > (float)(L - 1) ? (float)(L - 1) : v;
    if (a->padding == SB_GS_REFLECTION) return (float)reflect((double)v, (double)lo, (double)hi);
    return v;
}

/* A tap's index after the padding rule: -1 reads 0 (zeros). */
static int64_t tap(const sb_grid_sample_args *a, int64_t i, int64_t L, float lo, float hi)
{
    if (i >= 0 && i < L) return i;
    if (a->padding == SB_GS_ZEROS) return -1;
    if (a->padding == SB_GS_BORDER) return i < 0 ? 0 : L - 1;
    int64_t r = (int64_t)reflect((double)i, (double)lo, (double)hi);
    return r < 0 ? 0 : r >= L ? L - 1 : r;
}

static void weights(int mode, float t, float *c)
{
    if (mode == SB_GS_LINEAR) {
        c[0] = 1.0f - t, c[1] = t;
        return;
    }
    const float A = -0.75f;
    float t1 = t + 1.0f, q = 1.0f - t, q1 = 2.0f - t;
    c[0] = ((A * t1 - 5.0f * A) * t1 + 8.0f * A) * t1 - 4.0f * A;
    c[1] = (((A + 2.0f) * t - (A + 3.0f)) * t) * t + 1.0f;
    c[2] = (((A + 2.0f) * q - (A + 3.0f)) * q) * q + 1.0f;
    c[3] = ((A * q1 - 5.0f * A) * q1 + 8.0f * A) * q1 - 4.0f * A;
}

/* floor as an index (coordinates are bounded by the caller's clamp) */
static int64_t floor_index(float v)
{
    float f = floorf(v);
    if (!(f > -0x1p40f)) return -((int64_t)1 << 40);
    if (!(f < 0x1p40f)) return (int64_t)1 << 40;
    return (int64_t)f;
}

static float sample(const job *j, const float *plane, float gx, float gy)
{
    const sb_grid_sample_args *a = j->a;
    float x = unnormalize(gx, a->w, a->align_corners), y = unnormalize(gy, a->h, a->align_corners);
    if (a->mode == SB_GS_NEAREST) x = nearbyintf(x), y = nearbyintf(y);
    x = outside(a, x, a->w, j->lo_w, j->hi_w);
    y = outside(a, y, a->h, j->lo_h, j->hi_h);
    if (x != x || y != y) return a->padding == SB_GS_ZEROS ? 0.0f : plane[0];
    if (a->mode == SB_GS_NEAREST) {
        int64_t ix = tap(a, floor_index(x), a->w, j->lo_w, j->hi_w);
        int64_t iy = tap(a, floor_index(y), a->h, j->lo_h, j->hi_h);
        return ix < 0 || iy < 0 ? 0.0f : plane[iy * a->w + ix];
    }
    int n = a->mode == SB_GS_CUBIC ? 4 : 2, first = a->mode == SB_GS_CUBIC ? -1 : 0;
    int64_t x0 = floor_index(x), y0 = floor_index(y);
    float cx[4], cy[4];
    weights(a->mode, x - (float)x0, cx);
    weights(a->mode, y - (float)y0, cy);
    int64_t ix[4];
    for (int k = 0; k < n; ++k) ix[k] = tap(a, x0 + first + k, a->w, j->lo_w, j->hi_w);
    float v = 0.0f;
    for (int r = 0; r < n; ++r) {
        int64_t iy = tap(a, y0 + first + r, a->h, j->lo_h, j->hi_h);
        float row = 0.0f;
        for (int k = 0; k < n; ++k) {
            float p = iy < 0 || ix[k] < 0 ? 0.0f : plane[iy * a->w + ix[k]];
            row = k == 0 ? cx[0] * p : row + cx[k] * p;
        }
        v = r == 0 ? cy[0] * row : v + cy[r] * row;
    }
    return v;
}

/* A volume's sample at (gx, gy, gz): linear or nearest. */
static float sample_3d(const job *j, const float *vol, float gx, float gy, float gz)
{
    const sb_grid_sample_args *a = j->a;
    int64_t plane = a->h * a->w;
    float x = unnormalize(gx, a->w, a->align_corners), y = unnormalize(gy, a->h, a->align_corners);
    float z = unnormalize(gz, a->d, a->align_corners);
    if (a->mode == SB_GS_NEAREST) x = nearbyintf(x), y = nearbyintf(y), z = nearbyintf(z);
    x = outside(a, x, a->w, j->lo_w, j->hi_w);
    y = outside(a, y, a->h, j->lo_h, j->hi_h);
    z = outside(a, z, a->d, j->lo_d, j->hi_d);
    if (x != x || y != y || z != z) return a->padding == SB_GS_ZEROS ? 0.0f : vol[0];
    if (a->mode == SB_GS_NEAREST) {
        int64_t ix = tap(a, floor_index(x), a->w, j->lo_w, j->hi_w);
        int64_t iy = tap(a, floor_index(y), a->h, j->lo_h, j->hi_h);
        int64_t iz = tap(a, floor_index(z), a->d, j->lo_d, j->hi_d);
        return ix < 0 || iy < 0 || iz < 0 ? 0.0f : vol[iz * plane + iy * a->w + ix];
    }
    int64_t x0 = floor_index(x), y0 = floor_index(y), z0 = floor_index(z);
    float cx[2], cy[2], cz[2];
    weights(SB_GS_LINEAR, x - (float)x0, cx);
    weights(SB_GS_LINEAR, y - (float)y0, cy);
    weights(SB_GS_LINEAR, z - (float)z0, cz);
    int64_t ix[2], iy[2];
    for (int k = 0; k < 2; ++k) {
        ix[k] = tap(a, x0 + k, a->w, j->lo_w, j->hi_w);
        iy[k] = tap(a, y0 + k, a->h, j->lo_h, j->hi_h);
    }
    float v = 0.0f;
    for (int q = 0; q < 2; ++q) {
        int64_t iz = tap(a, z0 + q, a->d, j->lo_d, j->hi_d);
        float depth = 0.0f;
        for (int r = 0; r < 2; ++r) {
            float row = 0.0f;
            for (int k = 0; k < 2; ++k) {
                float p = iz < 0 || iy[r] < 0 || ix[k] < 0 ? 0.0f : vol[iz * plane + iy[r] * a->w + ix[k]];
                row = k == 0 ? cx[0] * p : row + cx[k] * p;
            }
            depth = r == 0 ? cy[0] * row : depth + cy[r] * row;
        }
        v = q == 0 ? cz[0] * depth : v + cz[q] * depth;
    }
    return v;
}

/* A volume's output row (n, c, od, oy). */
static void row_fn_3d(void *ctx, size_t unit, int thread_index)
{
    (void)thread_index;
    const job *j = ctx;
    const sb_grid_sample_args *a = j->a;
    size_t rows = (size_t)a->dout * (size_t)a->ho;
    size_t nc = unit / rows, at = unit % rows;
    int64_t n = (int64_t)nc / a->c;
    const float *vol = a->x + nc * (size_t)(a->d * a->h * a->w);
    const float *g = a->grid + ((size_t)n * rows + at) * (size_t)a->wo * 3;
    float *out = a->y + unit * (size_t)a->wo;
    for (int64_t ox = 0; ox < a->wo; ++ox)
        out[ox] = sbt_canonical(sample_3d(j, vol, g[3 * ox], g[3 * ox + 1], g[3 * ox + 2]));
}

static void row_fn(void *ctx, size_t unit, int thread_index)
{
    (void)thread_index;
    const job *j = ctx;
    const sb_grid_sample_args *a = j->a;
    int64_t oy = (int64_t)(unit % (size_t)a->ho);
    int64_t nc = (int64_t)(unit / (size_t)a->ho), n = nc / a->c;
    const float *plane = a->x + (size_t)nc * (size_t)(a->h * a->w);
    const float *g = a->grid + ((size_t)n * (size_t)a->ho + (size_t)oy) * (size_t)a->wo * 2;
    float *out = a->y + unit * (size_t)a->wo;
    for (int64_t ox = 0; ox < a->wo; ++ox) out[ox] = sbt_canonical(sample(j, plane, g[2 * ox], g[2 * ox + 1]));
}

int sb_grid_sample(const sb_grid_sample_args *a)
{
    int volume = a && a->d > 0;
    if (!a || a->max_threads < 1 || a->n < 0 || a->c < 0 || a->h < 1 || a->w < 1 || a->ho < 0 ||
        a->wo < 0 || a->mode < 0 || a->mode > 2 || a->padding < 0 || a->padding > 2 || a->d < 0 ||
        (volume && (a->dout < 0 || a->mode == SB_GS_CUBIC)))
        return SB_ERR_ARGUMENT;
    size_t units = (size_t)a->n * (size_t)a->c * (size_t)a->ho * (size_t)(volume ? a->dout : 1);
    if (units == 0 || a->wo == 0) return SB_OK;
    if (!a->x || !a->grid || !a->y) return SB_ERR_ARGUMENT;
    job j = {a, -0.5f, (float)a->h - 0.5f, -0.5f, (float)a->w - 0.5f, -0.5f, (float)a->d - 0.5f};
    if (a->align_corners) {
        j.lo_h = j.lo_w = j.lo_d = 0.0f;
        j.hi_h = (float)(a->h - 1), j.hi_w = (float)(a->w - 1), j.hi_d = (float)(a->d - 1);
    }
    double per = a->mode == SB_GS_CUBIC ? 16.0 : volume ? 8.0 : 4.0;
    sb_step_plan plan = sb_plan_step(units, 1, (double)units * (double)a->wo * SB_COST_RESIZE * per / 4);
    sb_run_step(&plan, a->max_threads, volume ? row_fn_3d : row_fn, &j);
    return SB_OK;
}
