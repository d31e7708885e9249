/* The negative log-likelihood loss of ONNX's NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (docs/onnx.md), callable without a graph: per
 * element (n, d) of the target, w = weight[t] (1 without weights; 0 where
 * t is the ignored index) and loss = (-x[n, t, d]) * w, one float32
 * multiply (+0 where ignored); then none (each loss), sum (their serial
 * sum from +0 in C order) or mean (that sum divided by the serial sum of
 * the w). */
#ifndef SB_KERNELS_NLL_H
#define SB_KERNELS_NLL_H

#include <stdint.h>

enum { SB_NLL_NONE = 0, SB_NLL_SUM = 1, SB_NLL_MEAN = 2 };

typedef struct {
    int64_t n, c, d;               /* x is (n, c, d) dense; the target (n, d) */
    const float *x;
    const int64_t *target;
    const float *weight;           /* c values, or null */
    int has_ignore;
    int64_t ignore_index;
    int reduction;                 /* SB_NLL_* */
} sb_nll_args;

/* out: n * d losses (none) or one value. SB_OK, or SB_ERR_INDEX with
 * *bad the first target outside [0, c) that is not ignored. */
int sb_nll_loss(const sb_nll_args *a, float *out, int64_t *bad);

#endif
