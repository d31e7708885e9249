/* scalar path's max pooling row kernels (pool_template.h). */
#include "isa/pool_template.h"

POOL_DEFINE(scalar)
