/* Elementwise operations of one input (unary.c): the operation codes shared
 * by the C API and the kernels, and the kernel type an ISA provides. */
#ifndef SB_UNARY_H
#define SB_UNARY_H

#include <stddef.h>

/* Part of the ABI with the Python binding (py/samebits/_binding/abi.py): never renumber. */
enum sb_unary_op {
    SB_OP_EXP = 0,
    SB_OP_LOG = 1,
    SB_OP_TANH = 2,
    SB_OP_ERF = 3,
    SB_OP_SIGMOID = 4,
    SB_OP_RELU = 5,
    SB_OP_RELU6 = 6,
    SB_OP_LEAKY_RELU = 7,         /* the one with a parameter: the negative slope */
    SB_OP_GELU = 8,
    SB_OP_GELU_TANH = 9,
    SB_OP_SILU = 10,
    SB_OP_HARDSWISH = 11,
    SB_OP_HARDSIGMOID = 12,
    SB_OP_SQRT = 13,
    SB_OP_HARDSWISH_ONNX = 14,    /* ONNX's formulas (activation.h) */
    SB_OP_HARDSIGMOID_ONNX = 15,  /* parameter: alpha (beta is 0.5) */
    SB_OP_ELU = 16,               /* parameter: alpha */
    SB_OP_SOFTPLUS = 17,
    SB_OP_MISH = 18,
    SB_OP_SIN = 19,               /* trig.h */
    SB_OP_COS = 20,
    SB_OP_COUNT
};

/* y[i] = op(x[i]) for i < n (param: leaky_relu's slope); y is x or does not
 * overlap it. */
typedef void (*sb_unary_kernel_fn)(int op, float param, const float *x, float *y, size_t n);

/* Each path's kernels (csrc/unary_<isa>.c, built under the same conditions as
 * its ukernel_<isa>.c), and how its descriptor names them. */
#define SB_UNARY_DECLARE(isa)                                                               \
    void sb_unary_##isa##_exact(int op, float param, const float *x, float *y, size_t n);  \
    void sb_unary_##isa##_fast(int op, float param, const float *x, float *y, size_t n);
SB_UNARY_DECLARE(scalar)
SB_UNARY_DECLARE(vec4)
SB_UNARY_DECLARE(avx2)
SB_UNARY_DECLARE(avx512)
SB_UNARY_DECLARE(neon)
#define UNARY_KERNELS(isa) .unary_exact = sb_unary_##isa##_exact, .unary_fast = sb_unary_##isa##_fast

#endif
