/* ONNX NonMaxSuppression (docs/onnx.md): the inputs, thresholds and errors;
 * the selection is the kernel's (kernels/nms.c), float32 overlaps in the
 * documented order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "framework/fpenv.h"
#include "kernels/nms.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "graph/ops/index/index_util.h"

typedef struct { int64_t center; } nms_state;

static int nms_load(sb_load_ctx *L)
{
    nms_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->center = sb_attr_int(L, "center_point_box", 0);
    if (L->status) return L->status;
    if (s->center != 0 && s->center != 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "center_point_box=%lld must be 0 or 1", (long long)s->center);
    return SB_OK;
}


/* A one-value input of NMS: absent (0), its size checked, SB_NEEDS_VALUES
 * while unknown; 1 when present. */
static int nms_scalar(sb_infer_ctx *I, int i, const char *what, const sb_tval **out)
{
    *out = NULL;
    if (I->n_in <= i || !I->in[i]) return 0;
    const sb_tval *v = I->in[i];
    if (sb_vinfo_numel(&v->info) != 1) {
        char s[256];
        sb_shape_text(&v->info, s, sizeof s);
        return sb_infer_fail(I, SB_ERR_VALUE, "%s must hold one value, got shape %s", what, s);
    }
    if (!v->data) return SB_NEEDS_VALUES;
    *out = v;
    return 1;
}

static int nms_setup(sb_infer_ctx *I, sb_nms_params *p)
{
    const nms_state *s = I->state;
    memset(p, 0, sizeof *p);
    const sb_tval *boxes = sb_infer_float(I, 0, "boxes");
    if (!boxes) return I->n_in > 0 && I->in[0] ? SB_ERR_TYPE : SB_ERR_VALUE;
    const sb_tval *scores = sb_infer_float(I, 1, "scores");
    if (!scores) return I->n_in > 1 && I->in[1] ? SB_ERR_TYPE : SB_ERR_VALUE;
    const sb_vinfo *bi = &boxes->info, *si = &scores->info;
    if (bi->rank != 3 || bi->dims[2] != 4 || si->rank != 3 || si->dims[0] != bi->dims[0] ||
        si->dims[2] != bi->dims[1]) {
        char bs[256], ss[256];
        sb_shape_text(bi, bs, sizeof bs);
        sb_shape_text(si, ss, sizeof ss);
        return sb_infer_fail(I, SB_ERR_VALUE, "boxes %s and scores %s must be (batches, boxes, 4) and "
                             "(batches, classes, boxes)", bs, ss);
    }
    const sb_tval *lim, *iou, *st;
    int status, need = 0;
    if ((status = nms_scalar(I, 2, "max_output_boxes_per_class", &lim)) < 0) return status;
    need |= status == SB_NEEDS_VALUES && !lim;
    if ((status = nms_scalar(I, 3, "iou_threshold", &iou)) < 0) return status;
    need |= status == SB_NEEDS_VALUES && !iou;
    if ((status = nms_scalar(I, 4, "score_threshold", &st)) < 0) return status;
    need |= status == SB_NEEDS_VALUES && !st;
    if (need) return SB_NEEDS_VALUES;
    p->batches = bi->dims[0], p->n = bi->dims[1], p->classes = si->dims[1];
    p->center = (int)s->center;
    /* the limit, as Python's min(max(limit, 0), n) and its `len(kept) == limit` */
    int64_t limit = 0;
    if (lim && lim->info.dtype == SB_DT_FLOAT) {
        float f = *(const float *)lim->data;
        if (f != f) limit = p->n;
        else if (f <= 0.0f) limit = 0;
        else if ((double)f >= (double)p->n || f != floorf(f)) limit = p->n;
        else limit = (int64_t)f;
    } else if (lim) {
        int64_t v;
        limit = !int_value(lim, 0, &v) || v > p->n ? p->n : v < 0 ? 0 : v;
    }
    p->limit = limit;
    double iou_v = 0.0;
    if (iou && iou->info.dtype == SB_DT_FLOAT) iou_v = *(const float *)iou->data;
    else if (iou) iou_v = iou->info.dtype == SB_DT_UINT64 ? (double)sb_int_at_u(iou, 0) : (double)sb_int_at(iou, 0);
    p->iou = (float)iou_v;
    if (!(p->iou >= 0.0f && p->iou <= 1.0f)) {
        char text[64];
        sb_py_float_repr((double)p->iou, text, sizeof text);
        return sb_infer_fail(I, SB_ERR_VALUE, "iou_threshold %s is outside [0, 1]", text);
    }
    if (st) {
        p->has_score = 1;
        if (st->info.dtype == SB_DT_FLOAT) p->score = *(const float *)st->data;
        else {
            p->score_is_int = 1;
            int64_t v;
            if (!int_value(st, 0, &v)) v = INT64_MAX;   /* no float32 score is above 2^63 - 1 but inf */
            p->score_int = v;
        }
    }
    int64_t total = sb_vinfo_numel(bi);
    if (total > 0 && !boxes->data) return SB_NEEDS_VALUES;
    if (sb_vinfo_numel(si) > 0 && !scores->data) return SB_NEEDS_VALUES;
    p->boxes = boxes->data, p->scores = scores->data;
    return SB_OK;
}

static int nms_infer(sb_infer_ctx *I)
{
    sb_nms_params p;
    sb_fpenv env;   /* IEEE float32 arithmetic, whatever the caller's rounding and flushing */
    sb_fpenv_enter(&env);
    int status = nms_setup(I, &p);
    sb_fpenv_leave(&env);
    if (status) return status;
    int64_t bytes = (int64_t)sb_nms_scratch_bytes(p.n);
    void *scratch = malloc((size_t)bytes);
    if (!scratch) return sb_infer_fail(I, SB_ERR_NO_MEMORY, "out of memory");
    sb_fpenv_enter(&env);
    int64_t count = sb_nms(&p, scratch, NULL);
    sb_fpenv_leave(&env);
    free(scratch);
    I->out[0].dtype = SB_DT_INT64;
    I->out[0].rank = 2;
    I->out[0].dims[0] = count;
    I->out[0].dims[1] = 3;
    I->workspace = bytes;
    return SB_OK;
}

static int nms_run(sb_run_ctx *R)
{
    /* the same setup as infer over the run's inputs (every one known now) */
    sb_infer_ctx I;
    sb_vinfo unused[1];
    sb_infer_from_run(R, &I, unused);
    sb_nms_params p;
    sb_fpenv env;
    sb_fpenv_enter(&env);
    int status = nms_setup(&I, &p);
    if (!status) sb_nms(&p, R->workspace, R->out[0]->data);
    sb_fpenv_leave(&env);
    return status == SB_NEEDS_VALUES ? SB_ERR_VALUE : status;
}

const sb_op_def sb_op_NonMaxSuppression = {
    .name = "NonMaxSuppression", .load = nms_load, .infer = nms_infer, .run = nms_run};
