/* The unique slices of a tensor (ONNX Unique; docs/onnx.md), callable
 * without a graph. x is viewed as (outer, n, inner) elements of `size`
 * bytes; slice i is x[:, i, :], compared element by element in C order in
 * TopK's element order (sb_order_key: float32 -0 equals +0, NaN equals NaN
 * and ranks above every number; integers signed or not), whatever the
 * caller's floating-point mode. */
#ifndef SB_KERNELS_UNIQUE_H
#define SB_KERNELS_UNIQUE_H

#include <stdint.h>
#include "kernels/topk.h"

typedef struct {
    const void *x;
    int64_t outer, n, inner;
    int size, kind;                /* bytes per element, enum sb_topk_kind */
    int sorted;                    /* groups in ascending order, else by first occurrence */
} sb_unique_args;

/* The number of groups, and per group (in output order) its first slice's
 * index and its count, and per slice its group (each array may be null;
 * first and counts hold n entries at most). scratch: 2 * n int64 values.
 * Returns the number of groups. */
int64_t sb_unique(const sb_unique_args *a, int64_t *first, int64_t *counts, int64_t *inverse,
                  int64_t *scratch);

#endif
