/* Non-maximum suppression (nms.h). */
#include <math.h>
#include <stdlib.h>
#include "framework/fpenv.h"
#include "kernels/nms.h"

typedef struct { float x0, x1, y0, y1; } nms_box;
typedef struct { float s; int64_t i; } nms_cand;

static float py_min(float a, float b) { return b < a ? b : a; }
static float py_max(float a, float b) { return b > a ? b : a; }

static nms_box box_extent(const float *box, int center)
{
    nms_box e;
    if (center) {
        float half_w = box[2] / 2.0f, half_h = box[3] / 2.0f;
        e.x0 = box[0] - half_w, e.x1 = box[0] + half_w;
        e.y0 = box[1] - half_h, e.y1 = box[1] + half_h;
    } else {
        e.x0 = py_min(box[1], box[3]), e.x1 = py_max(box[1], box[3]);
        e.y0 = py_min(box[0], box[2]), e.y1 = py_max(box[0], box[2]);
    }
    return e;
}

/* Whether box b's overlap with box a exceeds the threshold (float32 operations). */
static int suppresses(const nms_box *a, const nms_box *b, float iou)
{
    float ix_min = py_max(a->x0, b->x0), ix_max = py_min(a->x1, b->x1);
    if (ix_max <= ix_min) return 0;
    float iy_min = py_max(a->y0, b->y0), iy_max = py_min(a->y1, b->y1);
    if (iy_max <= iy_min) return 0;
    float w = ix_max - ix_min, h = iy_max - iy_min;
    float inter = w * h;
    if (inter <= 0.0f) return 0;
    float aw = a->x1 - a->x0, ah = a->y1 - a->y0, bw = b->x1 - b->x0, bh = b->y1 - b->y0;
    float area_a = aw * ah, area_b = bw * bh;
    float sum = area_a + area_b;
    float uni = sum - inter;
    if (area_a <= 0.0f || area_b <= 0.0f || uni <= 0.0f) return 0;
    float q = inter / uni;
    return q > iou;
}

/* Python's s > t for a float32 s and an integer t, exactly. */
static int above_int(float s, int64_t t)
{
    if (s != s) return 0;
    if (s >= 9223372036854775808.0f) return 1;
    if (s < -9223372036854775808.0f) return 0;
    double f = floor((double)s);
    int64_t fi = (int64_t)f;
    return fi > t || (fi == t && (double)s > f);
}

static int by_score(const void *pa, const void *pb)
{
    const nms_cand *a = pa, *b = pb;
    if (a->s != b->s) return a->s > b->s ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* The selection: its count, and the triples into out when not null.
 * scratch: n boxes, n candidates, n kept indices. */
static int64_t select_all(const sb_nms_params *p, void *scratch, int64_t *out)
{
    int64_t n = p->n, count = 0;
    nms_box *ext = scratch;
    nms_cand *cand = (nms_cand *)(ext + n);
    int64_t *kept = (int64_t *)(cand + n);
    if (!p->limit) return 0;
    for (int64_t b = 0; b < p->batches; ++b) {
        for (int64_t i = 0; i < n; ++i) ext[i] = box_extent(p->boxes + (b * n + i) * 4, p->center);
        for (int64_t c = 0; c < p->classes; ++c) {
            const float *row = p->scores + (b * p->classes + c) * n;
            int64_t nc = 0;
            for (int64_t i = 0; i < n; ++i) {
                float s = row[i];
                if (s != s) continue;
                if (p->has_score && !(p->score_is_int ? above_int(s, p->score_int) : s > p->score)) continue;
                cand[nc].s = s, cand[nc].i = i;
                ++nc;
            }
            qsort(cand, (size_t)nc, sizeof *cand, by_score);
            int64_t nk = 0;
            for (int64_t q = 0; q < nc && nk < p->limit; ++q) {
                int64_t i = cand[q].i;
                int hit = 0;
                for (int64_t j = 0; j < nk && !hit; ++j) hit = suppresses(&ext[kept[j]], &ext[i], p->iou);
                if (!hit) kept[nk++] = i;
            }
            for (int64_t j = 0; j < nk; ++j) {
                if (out) {
                    out[count * 3] = b, out[count * 3 + 1] = c, out[count * 3 + 2] = kept[j];
                }
                ++count;
            }
        }
    }
    return count;
}

size_t sb_nms_scratch_bytes(int64_t n)
{
    return (size_t)n * (sizeof(nms_box) + sizeof(nms_cand) + sizeof(int64_t)) + 64;
}

int64_t sb_nms(const sb_nms_params *p, void *scratch, int64_t *out)
{
    sb_fpenv env;   /* IEEE float32 arithmetic, whatever the caller's rounding and flushing */
    sb_fpenv_enter(&env);
    int64_t count = select_all(p, scratch, out);
    sb_fpenv_leave(&env);
    return count;
}
