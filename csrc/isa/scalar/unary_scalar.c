/* scalar path's elementwise kernels: built with vectorization off, one
 * element at a time (unary_template.h). */
#include "math/log_route.h"
/* log's fast route (math/log_route.h): no division, where the recipe has one */
#define SB_PATH_LOG_N(x, y, n) sb_exact_log_n(x, y, n)
#include "isa/unary_template.h"

UNARY_DEFINE(scalar)
