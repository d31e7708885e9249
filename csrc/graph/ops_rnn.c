/* ONNX operators: the rnn family (see op.h for how an operator is written). */
#include "op.h"

const sb_op_def sb_ops_rnn[] = {
    {0},
};
