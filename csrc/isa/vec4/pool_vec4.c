/* vec4 path's max pooling row kernels (pool_template.h). */
#include "isa/pool_template.h"
#include "isa/vec4.h"

#if VEC4_AVAILABLE
POOL_DEFINE(vec4)
#endif
