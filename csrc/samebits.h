/* samebits public C API: the only header the Python binding reads.
 *
 * Matrices are fp32 and addressed through element strides, so a row-padded or
 * transposed operand needs no copy: element (i, p) of A lives at
 * a[i * a_row + p * a_col]. C is written with unit column stride and row
 * stride ldc. Every call is synchronous and thread-safe. */
#ifndef SAMEBITS_H
#define SAMEBITS_H

#include <stddef.h>
#include <stdint.h>

#define SB_VERSION "0.1.0"

enum sb_mode { SB_MODE_FAST = 0, SB_MODE_EXACT = 1 };

enum sb_status {
    SB_OK = 0,
    SB_ERR_ARGUMENT = -1,    /* a null pointer with a nonzero size, bad mode or thread count */
    SB_ERR_PATH = -2,        /* path not built into this library or not runnable on this CPU */
    SB_ERR_NO_MEMORY = -3,   /* a scratch or packing buffer could not be allocated */
};

/* ISA paths. Every index names the same path in every build; a path that the
 * build target cannot hold reports sb_path_built() == 0. */
int sb_path_count(void);
const char *sb_path_name(int path);
int sb_path_built(int path);
int sb_path_supported(int path);     /* built and runnable on this CPU */
int sb_path_best(void);              /* the fastest supported path */
int sb_path_tile_rows(int path);     /* MR */
int sb_path_tile_cols(int path);     /* NR */
int sb_path_fused(int path);         /* fast mode uses fused multiply-add */

int sb_threading_available(void);    /* 0 where the build has no threads (WebAssembly) */
int sb_cpu_count(void);              /* processors online, as the C runtime sees them */
const char *sb_build_info(void);     /* compiler and target, for samebits.info() */

/* C = A * B, A m x k, B k x n, in the given mode on the given path, with at
 * most max_threads threads (the work estimate may use fewer). */
int sb_sgemm(int path, int mode, int max_threads,
             size_t m, size_t n, size_t k,
             const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
             const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
             float *c, ptrdiff_t ldc);

/* Prepacked B (the weights of a linear layer): sb_pack_b writes B (k x n)
 * in the packed layout of `path` into `packed` (at least sb_packed_b_bytes
 * bytes, 64-byte aligned is best); sb_sgemm_packed then multiplies by it with
 * the same bits as sb_sgemm on the unpacked B, on that path only. */
size_t sb_packed_b_bytes(int path, size_t k, size_t n);  /* 0 if the path is not built */
int sb_pack_b(int path, int max_threads, size_t k, size_t n,
              const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
              void *packed, size_t packed_size);
int sb_sgemm_packed(int path, int mode, int max_threads,
                    size_t m, size_t n, size_t k,
                    const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
                    const void *packed_b, float *c, ptrdiff_t ldc);

/* sb_sgemm with its 14 arguments in one array, in the order of sb_sgemm's
 * parameters (pointers as integers), or, when args[13] ... see below. One
 * argument is much cheaper to pass from ctypes than fourteen, which matters
 * for small products. args[14] selects the packed form: when nonzero,
 * args[9] is the packed B (as for sb_sgemm_packed) and args[10..11] are
 * ignored. */
int sb_sgemm_argv(const int64_t *args);

/* The exact-mode definition as a plain triple loop: the reference the tests
 * compare every path against. Slow on purpose. */
int sb_sgemm_naive(size_t m, size_t n, size_t k,
                   const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
                   const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
                   float *c, ptrdiff_t ldc);

/* Fills dst[0..count) with the portable test values of docs/test-values.md:
 * the values depend on (seed, index) only; nspecial special values (NaN,
 * infinities, signed zeros, subnormals) are placed at positions derived from
 * the seed. */
void sb_fill_test_values(float *dst, size_t count, uint32_t seed, uint32_t nspecial);

/* Sets or clears flush-to-zero and denormals-are-zero on the calling thread
 * (MXCSR on x86, FPCR on arm64); returns 1 where the CPU has such modes.
 * For tests that check exact mode under a caller's flush-to-zero. */
int sb_set_flush_to_zero(int on);
/* Mean nanoseconds of one pool job of nthreads empty chunks on nthreads
 * threads: the wake-up cost the thread estimate is calibrated against. */
double sb_pool_wake_ns(int nthreads, int repeats);
int sb_get_flush_to_zero(void);

/* ---- 2-D convolution, NCHW ----------------------------------------------
 *
 * y[n, oc, oy, ox] = sum over taps (c, ky, kx), in that nesting order, of
 * w[oc, c, ky, kx] * x[n, g*C/G + c, oy*stride_h + ky*dil_h - pad_top,
 *                                     ox*stride_w + kx*dil_w - pad_left]
 * with taps outside the input read as +0 (real products, not skipped), then
 * + bias[oc] (one rounded add) and the activation; exact mode stores NaN as
 * 0x7FC00000. x, w and y are contiguous. docs/convolution.md has the rest. */
enum sb_activation { SB_ACT_NONE = 0, SB_ACT_RELU = 1, SB_ACT_RELU6 = 2 };

/* Indexes into the int64 argument array of sb_conv2d_argv (pointers as
 * integers). SB_CONV_WEIGHTS is either the plain weights (Cout, C/G, KH, KW)
 * or, when SB_CONV_PACKED is nonzero, weights from sb_conv2d_pack on the same
 * path. SB_CONV_BIAS may be 0 (no bias). */
enum sb_conv_arg {
    SB_CONV_PATH, SB_CONV_MODE, SB_CONV_THREADS,
    SB_CONV_N, SB_CONV_C, SB_CONV_H, SB_CONV_W,
    SB_CONV_COUT, SB_CONV_KH, SB_CONV_KW, SB_CONV_GROUPS,
    SB_CONV_STRIDE_H, SB_CONV_STRIDE_W, SB_CONV_DIL_H, SB_CONV_DIL_W,
    SB_CONV_PAD_TOP, SB_CONV_PAD_BOTTOM, SB_CONV_PAD_LEFT, SB_CONV_PAD_RIGHT,
    SB_CONV_X, SB_CONV_WEIGHTS, SB_CONV_PACKED, SB_CONV_BIAS, SB_CONV_ACTIVATION, SB_CONV_Y,
    SB_CONV_NARGS
};
int sb_conv2d_argv(const int64_t *args);
/* The definition above as plain loops (any path and mode arguments are
 * ignored; always exact): the reference the tests compare against. */
int sb_conv2d_naive_argv(const int64_t *args);

/* Prepacked convolution weights for one path: bytes needed, then the packing.
 * A depthwise layer (C/G == 1, G > 1) keeps its weights as they are. */
size_t sb_conv2d_packed_bytes(int path, size_t cout, size_t cin_per_group, size_t kh, size_t kw,
                              size_t groups);
int sb_conv2d_pack(int path, size_t cout, size_t cin_per_group, size_t kh, size_t kw,
                   size_t groups, const float *w, void *packed, size_t packed_size);

/* 2-D max pooling, NCHW, contiguous: y[n, c, oy, ox] is the largest tap of
 * its window, NaN taps ignored, the first of equal taps kept; a window with no
 * tap inside the input gives -FLT_MAX. See docs/maxpool.md. Indexes into the
 * argument array of sb_max_pool2d_argv: */
enum sb_pool_arg {
    SB_POOL_N, SB_POOL_C, SB_POOL_H, SB_POOL_W,
    SB_POOL_KH, SB_POOL_KW, SB_POOL_STRIDE_H, SB_POOL_STRIDE_W, SB_POOL_DIL_H, SB_POOL_DIL_W,
    SB_POOL_PAD_TOP, SB_POOL_PAD_BOTTOM, SB_POOL_PAD_LEFT, SB_POOL_PAD_RIGHT,
    SB_POOL_X, SB_POOL_Y, SB_POOL_THREADS,
    SB_POOL_NARGS
};
int sb_max_pool2d_argv(const int64_t *args);

#endif
