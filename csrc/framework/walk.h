/* Strided walks made short: the dimensions of a walk merged where every
 * operand steps through them as one (used by the kernels' callers and by
 * the kernels that copy). */
#ifndef SB_FRAMEWORK_WALK_H
#define SB_FRAMEWORK_WALK_H

#include <stdint.h>

/* Merges a walk over `rank` dims for `count` operands (strides[o][d]):
 * extent-1 dims dropped, neighbours every operand steps through as one
 * merged. Returns the new rank (at least 1). */
int sb_merge_walk(int rank, int64_t *shape, int count, int64_t *const *strides);

#endif
