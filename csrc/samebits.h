/* samebits public C API: the only header the Python binding reads.
 *
 * Matrices are fp32 and addressed through element strides, so a row-padded or
 * transposed operand needs no copy: element (i, p) of A lives at
 * a[i * a_row + p * a_col]. C is written with unit column stride. Every call
 * is synchronous and thread-safe.
 *
 * The operations that take many arguments (matmul, conv2d, max_pool2d, their
 * plans) take one structure of int64_t fields, pointers stored as integers:
 * the layout is then the same on every target (wasm32 included) and one
 * pointer is all that crosses the ctypes boundary. py/samebits/_binding/abi.py
 * declares the same structures field for field. */
#ifndef SAMEBITS_H
#define SAMEBITS_H

#include <stddef.h>
#include <stdint.h>

#if defined(SB_BUILDING_LIBRARY) && defined(__GNUC__)
#define SB_API __attribute__((visibility("default")))
#else
#define SB_API
#endif

enum sb_mode { SB_MODE_FAST = 0, SB_MODE_EXACT = 1 };

enum sb_status {
    SB_OK = 0,
    SB_ERR_ARGUMENT = -1,    /* a null pointer with a nonzero size, bad mode, size or thread count */
    SB_ERR_PATH = -2,        /* path not built into this library or not runnable on this CPU */
    SB_ERR_NO_MEMORY = -3,   /* a scratch or packing buffer could not be allocated */
    /* the graph runtime's (sb_session_*), each with a message (sb_last_error) */
    SB_ERR_DECODE = -4,      /* the bytes are not a well-formed ONNX file */
    SB_ERR_UNSUPPORTED = -5, /* an operator, attribute, opset or type the runtime lacks */
    SB_ERR_VALUE = -6,       /* an input or attribute value that does not fit (ValueError) */
    SB_ERR_TYPE = -7,        /* an input of the wrong element type (TypeError) */
    SB_ERR_INDEX = -8,       /* an index out of range (IndexError) */
};

/* Every size, stride, dilation and padding argument must lie in [0, SB_MAX_SIZE]. */
#define SB_MAX_SIZE ((int64_t)1 << 40)

/* The library's version, "MAJOR.MINOR.PATCH" (the package's, from one file). */
SB_API const char *sb_version(void);

/* ISA paths. Every index names the same path in every build; a path that the
 * build target cannot hold reports sb_path_built() == 0. */
SB_API int sb_path_count(void);
SB_API const char *sb_path_name(int path);
SB_API int sb_path_built(int path);
SB_API int sb_path_supported(int path);     /* built and runnable on this CPU */
SB_API int sb_path_best(void);              /* the fastest supported path */
SB_API int sb_path_tile_rows(int path);     /* MR of the path's matrix-product tile */
SB_API int sb_path_tile_cols(int path);     /* NR */
SB_API int sb_path_fused(int path);         /* fast mode uses fused multiply-add */

SB_API int sb_threading_available(void);    /* 0 where the build has no threads (WebAssembly) */
SB_API int sb_cpu_count(void);              /* processors online, as the C runtime sees them */
SB_API const char *sb_build_info(void);     /* compiler and target, for samebits.info() */

/* ---- matrix products ------------------------------------------------------
 *
 * C = A * B, A m x k, B k x n, in the given mode on the given path, with at
 * most max_threads threads (the work estimate may use fewer). */
SB_API int sb_sgemm(int path, int mode, int max_threads,
                    size_t m, size_t n, size_t k,
                    const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
                    const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
                    float *c, ptrdiff_t ldc);

/* Prepacked B (the weights of a linear layer): sb_pack_b writes B (k x n)
 * in the packed layout of `path` into `packed` (at least sb_packed_b_bytes
 * bytes, 64-byte aligned is best); a product with it has the same bits as
 * with the unpacked B, on that path only. */
SB_API size_t sb_packed_b_bytes(int path, size_t k, size_t n);  /* 0 if not built or too large */
SB_API int sb_pack_b(int path, int max_threads, size_t k, size_t n,
                     const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
                     void *packed, size_t packed_size);
SB_API int sb_sgemm_packed(int path, int mode, int max_threads,
                           size_t m, size_t n, size_t k,
                           const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
                           const void *packed_b, float *c, ptrdiff_t ldc);

/* The fused epilogue of sb_matmul and sb_conv2d: after the sum, + bias (one
 * rounded add), then the activation, each defined in docs/exact-ops.md (the
 * same bits as the standalone function). The `activation` argument holds
 * the code in bits 0-7 and, for SB_ACT_LEAKY_RELU the binary32 bits of the
 * negative slope, for SB_ACT_HARDSIGMOID_ONNX those of alpha (beta is 0.5)
 * in bits 32-63; every other bit is 0. The _ONNX ones are ONNX's HardSwish
 * and HardSigmoid formulas, not torch's. */
enum sb_activation {
    SB_ACT_NONE = 0, SB_ACT_RELU = 1, SB_ACT_RELU6 = 2, SB_ACT_LEAKY_RELU = 3, SB_ACT_GELU = 4,
    SB_ACT_GELU_TANH = 5, SB_ACT_SILU = 6, SB_ACT_HARDSWISH = 7, SB_ACT_HARDSIGMOID = 8,
    SB_ACT_SIGMOID = 9, SB_ACT_TANH = 10, SB_ACT_HARDSWISH_ONNX = 11,
    SB_ACT_HARDSIGMOID_ONNX = 12, SB_ACT_COUNT
};

/* Batch dimensions of sb_matmul: product number (i_0, ..., i_{ndim-1}) in
 * C order reads A at a + sum i_d * a_stride[d] (elements), B and C likewise.
 * A stride of 0 broadcasts. */
#define SB_MAX_BATCH_DIMS 16
typedef struct sb_batch {
    int64_t ndim;
    int64_t shape[SB_MAX_BATCH_DIMS];
    int64_t a_stride[SB_MAX_BATCH_DIMS];
    int64_t b_stride[SB_MAX_BATCH_DIMS];   /* must be 0 when B is packed */
    int64_t c_stride[SB_MAX_BATCH_DIMS];
} sb_batch;

/* One matrix product, or a batch of them (batch != 0), every one with the
 * bits it has alone: C = A * B, then + bias[j] on column j when bias != 0,
 * then the activation; exact mode stores NaN as 0x7FC00000. b_packed != 0:
 * b is sb_pack_b's layout for this path (b_row and b_col unused). */
typedef struct sb_matmul_args {
    int64_t path, mode, max_threads;
    int64_t m, n, k;
    int64_t a, a_row, a_col;
    int64_t b, b_row, b_col, b_packed;
    int64_t c, c_row;
    int64_t bias, activation;
    int64_t batch;                         /* address of an sb_batch, or 0: one product */
} sb_matmul_args;
SB_API int sb_matmul(const sb_matmul_args *args);

/* The plan of a call, as samebits.explain() shows it: what would run, without
 * running it. Filled by sb_matmul_plan / sb_conv2d_plan. */
enum sb_route {
    SB_ROUTE_EMPTY = 0,      /* nothing to compute */
    SB_ROUTE_ZERO_K = 1,     /* no terms: +0, then the epilogue */
    SB_ROUTE_TILES = 2,      /* MC x NC tiles over B prepacked, packed whole or read in place */
    SB_ROUTE_PANELS = 3,     /* A packed, B packed panel by panel inside each chunk */
    SB_ROUTE_ROW = 4,        /* one row of A: the row kernel streams B */
    SB_ROUTE_COLUMN = 5,     /* one column of B (a 1x1 convolution over a 1x1 input) */
    SB_ROUTE_DEPTHWISE = 6,  /* the direct depthwise kernel */
};
enum sb_b_source {
    SB_B_NONE = 0,
    SB_B_PREPACKED = 1,      /* packed once by the caller (sb_pack_b, weights) */
    SB_B_PACKED_WHOLE = 2,   /* packed (or gathered) whole before the tiles, in parallel */
    SB_B_IN_PLACE = 3,       /* read where it is; only a ragged last strip is packed */
    SB_B_PER_PANEL = 4,      /* packed panel by panel into each chunk's scratch */
    SB_B_PER_STRIP = 5,      /* gathered strip by strip into the first-level cache */
};
typedef struct sb_plan_info {
    int64_t route, b_source;
    int64_t isa_path;                 /* the path index */
    int64_t mr, nr, mc, nc;           /* register tile and cache tile */
    int64_t products;                 /* 2-D products in the call */
    int64_t m, n, k;                  /* the shape of each */
    int64_t prepare_chunks;           /* chunks of the packing phase (all products) */
    int64_t compute_chunks;           /* chunks of the compute phase (all products) */
    int64_t threads;                  /* threads the compute phase would wake */
    int64_t waves;                    /* runs the products are split into (workspace bound) */
    int64_t workspace_bytes;          /* largest workspace of one wave */
    int64_t estimated_ns;             /* one thread's estimated time */
    int64_t pack_a;                   /* A is packed once per product before the compute phase */
    int64_t a_in_place;               /* the tile kernels read A where it is (no packing) */
} sb_plan_info;
SB_API int sb_matmul_plan(const sb_matmul_args *args, sb_plan_info *info);

/* The exact-mode definition as a plain triple loop: the reference the tests
 * compare every path against. Slow on purpose. */
SB_API int sb_sgemm_naive(size_t m, size_t n, size_t k,
                          const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
                          const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
                          float *c, ptrdiff_t ldc);

/* ---- 2-D convolution, NCHW ----------------------------------------------
 *
 * y[n, oc, oy, ox] = sum over taps (c, ky, kx), in that nesting order, of
 * w[oc, c, ky, kx] * x[n, g*C/G + c, oy*stride_h + ky*dil_h - pad_top,
 *                                     ox*stride_w + kx*dil_w - pad_left]
 * with taps outside the input read as +0 (real products, not skipped), then
 * + bias[oc] (one rounded add) and the activation; exact mode stores NaN as
 * 0x7FC00000. x, w and y are contiguous. docs/convolution.md has the rest.
 * weights is either the plain weights (Cout, C/G, KH, KW) or, when packed is
 * nonzero, weights from sb_conv2d_pack on the same path. bias may be 0. */
typedef struct sb_conv2d_args {
    int64_t path, mode, max_threads;
    int64_t n, c, h, w;
    int64_t cout, kh, kw, groups;
    int64_t stride_h, stride_w, dil_h, dil_w;
    int64_t pad_top, pad_bottom, pad_left, pad_right;
    int64_t x, weights, packed, bias, activation, y;
} sb_conv2d_args;
SB_API int sb_conv2d(const sb_conv2d_args *args);
SB_API int sb_conv2d_plan(const sb_conv2d_args *args, sb_plan_info *info);
/* The definition above as plain loops (path and mode are ignored; always
 * exact): the reference the tests compare against. */
SB_API int sb_conv2d_naive(const sb_conv2d_args *args);

/* Prepacked convolution weights for one path: bytes needed (0 when too large
 * or not built), then the packing. A depthwise layer (C/G == 1, G > 1) keeps
 * its weights as they are. */
SB_API size_t sb_conv2d_packed_bytes(int path, size_t cout, size_t cin_per_group, size_t kh,
                                     size_t kw, size_t groups);
SB_API int sb_conv2d_pack(int path, size_t cout, size_t cin_per_group, size_t kh, size_t kw,
                          size_t groups, const float *w, void *packed, size_t packed_size);

/* ---- 2-D max pooling, NCHW, contiguous ------------------------------------
 *
 * y[n, c, oy, ox] is the largest tap of its window, NaN taps ignored, the
 * first of equal taps kept; a window with no tap inside the input gives
 * -FLT_MAX. See docs/maxpool.md. */
typedef struct sb_max_pool2d_args {
    int64_t n, c, h, w;
    int64_t kh, kw, stride_h, stride_w, dil_h, dil_w;
    int64_t pad_top, pad_bottom, pad_left, pad_right;
    int64_t x, y, max_threads;
} sb_max_pool2d_args;
SB_API int sb_max_pool2d(const sb_max_pool2d_args *args);

/* ---- elementwise functions ------------------------------------------------
 *
 * y[i] = op(x[i]) for i < count, op an enum sb_unary_op of unary.h (exp 0,
 * log 1, tanh 2, erf 3, sigmoid 4, relu 5, relu6 6, leaky_relu 7, gelu 8,
 * gelu_tanh 9, silu 10, hardswish 11, hardsigmoid 12, sqrt 13). param holds the
 * binary32 bits of leaky_relu's negative slope (0 for the others). Exact mode
 * is defined step by step in docs/exact-ops.md and gives the same bits on
 * every path and thread count; fast mode has its own exp, sigmoid, tanh,
 * log and erf (fast_math.h) and runs the exact kernels for the others.
 * y may be x (in place) but must not partly overlap it. */
typedef struct sb_unary_args {
    int64_t path, mode, op, max_threads, count;
    int64_t x, y, param;
} sb_unary_args;
SB_API int sb_unary(const sb_unary_args *args);

/* Elementwise arithmetic with broadcasting: y = op(a, b), op an enum
 * sb_binary_op of arith.h (add 0, sub 1, mul 2, div 3, maximum 4, minimum 5,
 * pow 6), defined in docs/exact-ops.md (the same in both modes). The output
 * is ndim-dimensional (1 to SB_MAX_BATCH_DIMS), dense in C order; a and b are
 * read at element strides (0 along a broadcast dimension). y may be an
 * operand read with y's own layout; no other overlap is allowed. */
typedef struct sb_binary_args {
    int64_t path, mode, op, max_threads, ndim;
    int64_t shape[SB_MAX_BATCH_DIMS];
    int64_t a, a_stride[SB_MAX_BATCH_DIMS];
    int64_t b, b_stride[SB_MAX_BATCH_DIMS];
    int64_t y;
} sb_binary_args;
SB_API int sb_binary(const sb_binary_args *args);

/* Reductions and normalizations over one axis (reduce.c, docs/exact-ops.md):
 * x is C-contiguous, seen as (outer, n, inner) with the axis n. op: sum 0 and
 * mean 1 write (outer, inner); softmax 2 and log_softmax 3 write (outer, n,
 * inner); layer_norm 4 (inner must be 1) normalizes each row of n values
 * with eps (binary32 bits) and the optional weight and bias (n values each,
 * 0 for none; only layer_norm takes them). The same in both modes. */
typedef struct sb_reduce_args {
    int64_t path, mode, op, max_threads;
    int64_t outer, n, inner;
    int64_t x, y, weight, bias, eps;
} sb_reduce_args;
SB_API int sb_reduce(const sb_reduce_args *args);

/* Average pooling of NCHW float32 (avgpool.c, docs/exact-ops.md): fixed
 * windows (kh x kw, strides, padding; count_include_pad 0 or 1;
 * divisor_override 0 for none) or, with adaptive = 1, torch's adaptive
 * windows for an oh x ow output (kernel, stride and padding unused, 0). The
 * caller gives oh and ow (H, W and both at least 1). */
typedef struct sb_avg_pool2d_args {
    int64_t n, c, h, w, oh, ow;
    int64_t kh, kw, stride_h, stride_w;
    int64_t pad_top, pad_bottom, pad_left, pad_right;
    int64_t count_include_pad, divisor_override, adaptive;
    int64_t x, y, max_threads;
} sb_avg_pool2d_args;
SB_API int sb_avg_pool2d(const sb_avg_pool2d_args *args);

/* Normalization of float32 (N, C, spatial) (norm.c, docs/exact-ops.md): op 0
 * batch_norm in inference form (mean and var: C values; groups 0), op 1
 * group_norm (groups divides C; mean and var 0). weight and bias: C values
 * or 0; eps: binary32 bits. The same in both modes. */
typedef struct sb_norm_args {
    int64_t path, mode, op, max_threads;
    int64_t n, c, spatial, groups;
    int64_t x, y, mean, var, weight, bias, eps;
} sb_norm_args;
SB_API int sb_norm(const sb_norm_args *args);

/* Data movement (copy.c): element (i_0, ..., i_{ndim-1}) of y at
 * y + sum i_d * y_stride[d] gets x's at x + sum i_d * x_stride[d] (element
 * strides: x's of any sign or 0, y's positive and never writing one element
 * twice, which the caller guarantees). y may be a window of a larger tensor
 * (concatenation, padding). The bits move as they are. */
typedef struct sb_copy_args {
    int64_t ndim, shape[SB_MAX_BATCH_DIMS];
    int64_t x, x_stride[SB_MAX_BATCH_DIMS];
    int64_t y, y_stride[SB_MAX_BATCH_DIMS];
    int64_t max_threads;
} sb_copy_args;
SB_API int sb_copy(const sb_copy_args *args);

/* Resizing of NCHW float32 (resize.c, docs/exact-ops.md): mode 0 nearest,
 * 1 bilinear (align_corners 0 or 1; 0 for nearest); scale_h and scale_w are
 * the binary32 bits of the source-per-output scales (torch's
 * interpolate rules); H, W, OH, OW at least 1. */
typedef struct sb_resize2d_args {
    int64_t n, c, h, w, oh, ow;
    int64_t mode, align_corners, scale_h, scale_w;
    int64_t x, y, max_threads;
} sb_resize2d_args;
SB_API int sb_resize2d(const sb_resize2d_args *args);


/* ---- the graph runtime: ONNX models (csrc/graph/, docs/c-api.md) ----------
 *
 * sb_session_load reads an ONNX model, checks that every operator,
 * attribute, opset and type is supported, folds constants, applies the
 * load-time rewrites and packs the weights; sb_session_run plans the graph
 * for the inputs' shapes (once per set of shapes) and runs every node in C
 * over one memory arena. Every call returns a status; on an error,
 * sb_last_error() gives the calling thread's message. A session may be run
 * from several threads at once, each run with its own arena. */
typedef struct sb_session sb_session;

/* The calling thread's last graph-runtime error message ("" when none). */
SB_API const char *sb_last_error(void);

/* An external data file the host supplies (where the runtime cannot open
 * files): location as the model names it, and its bytes. */
typedef struct sb_external_data {
    int64_t location;            /* const char *, NUL-terminated */
    int64_t data, size;
} sb_external_data;

typedef struct sb_load_args {
    int64_t data, size;          /* the .onnx file's bytes (read during the call only) */
    int64_t mode, path, max_threads;
    int64_t base_dir;            /* const char *: where external data files are, or 0 */
    int64_t external_count, external;   /* sb_external_data[external_count], or 0 */
    int64_t session;             /* sb_session **: receives the session */
} sb_load_args;
SB_API int sb_session_load(const sb_load_args *args);
SB_API void sb_session_free(sb_session *session);

/* A graph input or output: its name, declared element type (TensorProto's
 * number; 0 when not declared) and shape (rank -1 when not declared; a
 * dimension -1 when unknown, with its symbolic name when it has one). */
typedef struct sb_io_info {
    int64_t name;                /* const char * */
    int64_t dtype, rank;
    int64_t dims[SB_MAX_BATCH_DIMS];
    int64_t dim_names[SB_MAX_BATCH_DIMS];   /* const char * or 0 */
} sb_io_info;
SB_API int sb_session_io_count(const sb_session *session, int outputs);
SB_API int sb_session_io_info(const sb_session *session, int outputs, int index,
                              sb_io_info *info);

/* A tensor crossing the API: element type, shape, C-ordered elements. */
typedef struct sb_tensor_arg {
    int64_t dtype, rank;
    int64_t dims[SB_MAX_BATCH_DIMS];
    int64_t data;                /* const void * / void * */
} sb_tensor_arg;

typedef struct sb_run_args {
    int64_t inputs;              /* sb_tensor_arg[input count], in sb_session_io_info order */
    int64_t output_count;        /* outputs wanted */
    int64_t output_indices;      /* int64_t[output_count]: indices of graph outputs */
    int64_t outputs;             /* sb_tensor_arg[output_count]: filled; each data is a new
                                  * buffer the caller frees with sb_buffer_free */
    int64_t profile_ns, profile_calls;  /* int64_t[profile count] to add to, or 0 */
    int64_t max_threads;         /* threads for this run (0: the session's) */
} sb_run_args;
SB_API int sb_session_run(sb_session *session, const sb_run_args *args);
SB_API void sb_buffer_free(void *buffer);

/* Profile labels: one per kind of node ("Conv", a fused one "Conv+relu"). */
SB_API int sb_session_profile_count(const sb_session *session);
SB_API const char *sb_session_profile_label(const sb_session *session, int index);
/* The nodes left to run after loading (folded ones are gone), the plans
 * made so far, and the registered operator types (sorted, one per call). */
SB_API int sb_session_node_count(const sb_session *session);
SB_API int sb_session_plan_count(sb_session *session);
SB_API int sb_onnx_operator_count(void);
SB_API const char *sb_onnx_operator_name(int index);

/* ---- test support -------------------------------------------------------- */

/* Fills dst[0..count) with the portable test values of docs/test-values.md:
 * the values depend on (seed, index) only; nspecial special values (NaN,
 * infinities, signed zeros, subnormals) are placed at positions derived from
 * the seed. */
SB_API void sb_fill_test_values(float *dst, size_t count, uint32_t seed, uint32_t nspecial);

/* Sets or clears flush-to-zero and denormals-are-zero on the calling thread
 * (MXCSR on x86, FPCR on arm64); returns 1 where the CPU has such modes.
 * For tests that check exact mode under a caller's flush-to-zero. */
SB_API int sb_set_flush_to_zero(int on);
SB_API int sb_get_flush_to_zero(void);

/* Mean nanoseconds of one parallel run of nthreads empty chunks on nthreads
 * threads: the wake-up cost the thread estimate is calibrated against. */
SB_API double sb_threads_wake_ns(int nthreads, int repeats);

/* The planner's unit check (plan.c): 0 when every tile of every built path
 * satisfies the framework's assumptions, else the number of violations. */
SB_API int sb_plan_selfcheck(void);

/* Parses an .onnx file's bytes with the graph runtime's protobuf reader and
 * sets *text to a JSON description of everything the parse holds (model,
 * graphs, nodes, attributes, tensors, value infos; csrc/graph/onnx_describe.c
 * gives the encoding), for checking the reader against the onnx package.
 * The caller frees the text with sb_buffer_free. Returns SB_OK, or the
 * parse's status (SB_ERR_DECODE, ...) with the message in sb_last_error. */
SB_API int sb_onnx_describe(const void *data, int64_t size, char **text);

#endif
