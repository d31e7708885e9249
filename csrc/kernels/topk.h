/* TopK over lines of a tensor (topk.c; ONNX TopK's compute, docs/onnx.md):
 * for each line along the axis, the k largest (or smallest) elements, best
 * first, equal elements by increasing index. Elements are ordered as numpy
 * and ONNX Runtime order them: NaN above every float, -0 equal to +0,
 * integers by their signed or unsigned value. Values move as bits. */
#ifndef SB_KERNELS_TOPK_H
#define SB_KERNELS_TOPK_H

#include <stdint.h>

enum sb_topk_kind { SB_TOPK_FLOAT32, SB_TOPK_SIGNED, SB_TOPK_UNSIGNED };

/* Element `at` of x (elements of `size` bytes of `kind`) as an unsigned key
 * in that order: NaN the largest (all NaN equal), -0 equal to +0. Float
 * comparisons in it follow the caller's floating-point mode: call it inside
 * sb_fpenv_enter, as sb_topk and sb_unique do. */
uint64_t sb_order_key(const void *x, int kind, int size, int64_t at);

/* One element as the sort sees it: its key in the element's order and its
 * index along the line (ties: the lower first). */
typedef struct { uint64_t key; int64_t j; } sb_topk_entry;

/* x holds outer x size x inner elements of elem_size bytes (1, 2, 4 or 8) of
 * `kind`; each (o, i) line's k best go to vals (outer x k x inner elements,
 * or null) and their indices to inds (the same shape, or null). scratch
 * holds `size` entries. Comparisons see subnormals as IEEE has them, whatever
 * the caller's floating-point mode. */
void sb_topk(const void *x, int kind, int elem_size, int64_t outer, int64_t size, int64_t inner,
             int64_t k, int largest, void *vals, int64_t *inds, sb_topk_entry *scratch);

#endif
