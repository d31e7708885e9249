/* The few-column kernel's 4-lane slivers on paths built over vec4.h (the
 * vec4 path, and neon, whose vectors are NEON's): vec4's operations, fused
 * exactly where vec4_fma is. */
#ifndef SB_SLIVER_VEC4_H
#define SB_SLIVER_VEC4_H

#include "isa/vec4.h"

typedef vec4 sliver_vec;
#define sliver_load vec4_load
#define sliver_load2 vec4_load2
#define sliver_store vec4_store
#define sliver_store2 vec4_store2
#define sliver_splat vec4_splat
#define sliver_zero vec4_zero
#define sliver_add vec4_add
#define sliver_mul vec4_mul
#define sliver_fma vec4_fma
/* (a part sliver of 4-lane slivers is always 2 rows: MR is 4q or 4q + 2) */
#define sliver_load_part(p, n) sliver_load2(p)
#define sliver_store_part(p, v, n) sliver_store2((p), (v))
#define sliver_canon vec4_canon

#endif
