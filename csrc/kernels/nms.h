/* Non-maximum suppression (nms.c; ONNX NonMaxSuppression's compute,
 * docs/onnx.md): per batch and class, the boxes whose score passes the
 * threshold, best score first (equal scores by lower index), each kept
 * unless its overlap with a kept box exceeds iou, up to limit per class. The
 * overlap is float32 arithmetic in ONNX Runtime's order, under IEEE rounding
 * whatever the caller's mode (sb_nms sets it). */
#ifndef SB_KERNELS_NMS_H
#define SB_KERNELS_NMS_H

#include <stddef.h>
#include <stdint.h>

/* boxes: batches x n x 4 (corners y0, x0, y1, x1, or with center: x, y, w, h);
 * scores: batches x classes x n. The score threshold is a float32 or, when
 * score_is_int, an integer compared exactly (Python's s > t). */
typedef struct {
    int64_t batches, n, classes, limit;
    float iou;
    int has_score, score_is_int;
    float score;
    int64_t score_int;
    int center;
    const float *boxes, *scores;
} sb_nms_params;

/* Scratch bytes for n boxes. */
size_t sb_nms_scratch_bytes(int64_t n);
/* The selection's count, and its (batch, class, box) triples into out
 * (count x 3) when out is not null. */
int64_t sb_nms(const sb_nms_params *p, void *scratch, int64_t *out);

#endif
