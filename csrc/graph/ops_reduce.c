/* ONNX operators: the reduce family (see op.h for how an operator is written). */
#include "op.h"

const sb_op_def sb_ops_reduce[] = {
    {0},
};
