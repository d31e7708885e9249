/* scalar path's elementwise kernels: built with vectorization off, one
 * element at a time (unary_template.h). */
#include "isa/unary_template.h"

UNARY_DEFINE(scalar)
