/* The kernels on tensors (kcall.h). */
#include <stdio.h>
#include <string.h>
#include "graph/kcall.h"
#include "kernels/copy.h"

int sb_broadcast(const sb_vinfo *const *shapes, int n, sb_vinfo *out)
{
    int rank = 0;
    for (int k = 0; k < n; ++k) if (shapes[k]->rank > rank) rank = shapes[k]->rank;
    out->rank = rank;
    for (int d = 0; d < rank; ++d) {
        int64_t size = 1;
        int zero = 0;
        for (int k = 0; k < n; ++k) {
            int j = d - (rank - shapes[k]->rank);
            if (j < 0) continue;
            int64_t s = shapes[k]->dims[j];
            if (s == 0) zero = 1;
            if (s == 1) continue;
            if (size != 1 && s != size) return -1;
            size = s;
        }
        /* a zero-size dimension broadcasts against 1 only (checked above) */
        out->dims[d] = zero ? 0 : size;
    }
    return 0;
}

void sb_broadcast_error_text(const sb_vinfo *const *shapes, int n, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = 0;
    at += (size_t)snprintf(buf, size, "shapes ");
    for (int k = 0; k < n && at < size; ++k) {
        char s[256];
        sb_shape_text(shapes[k], s, sizeof s);
        at += (size_t)snprintf(buf + at, size - at, "%s%s", k ? " and " : "", s);
    }
    if (at < size) snprintf(buf + at, size - at, " do not broadcast");
}

int sb_infer_broadcast(sb_infer_ctx *I, const sb_vinfo *const *shapes, int n, sb_vinfo *out)
{
    if (!sb_broadcast(shapes, n, out)) return SB_OK;
    char text[600];
    sb_broadcast_error_text(shapes, n, text, sizeof text);
    return sb_infer_fail(I, SB_ERR_VALUE, "%s", text);
}

void sb_broadcast_strides(const sb_vinfo *x, const sb_vinfo *out, int64_t *strides)
{
    int64_t own[SB_MAX_RANK];
    sb_c_strides(x, own);
    int pad = out->rank - x->rank;
    for (int d = 0; d < out->rank; ++d) {
        int j = d - pad;
        strides[d] = j < 0 || (x->dims[j] == 1 && out->dims[d] != 1) ? 0 : own[j];
    }
}

int sb_k_binary_prepare(int mode, int path, int op, const sb_vinfo *a, const sb_vinfo *b,
                        const sb_vinfo *y, sb_binary_call *call)
{
    sb_binary_args args;
    memset(&args, 0, sizeof args);
    int64_t shape[SB_MAX_RANK], sa[SB_MAX_RANK], sb_[SB_MAX_RANK], sy[SB_MAX_RANK];
    memcpy(shape, y->dims, sizeof shape);
    sb_broadcast_strides(a, y, sa);
    sb_broadcast_strides(b, y, sb_);
    sb_c_strides(y, sy);
    int64_t *strides[3] = {sa, sb_, sy};
    int rank = sb_vinfo_numel(y) == 0 ? 1 : sb_merge_walk(y->rank, shape, 3, strides);
    if (sb_vinfo_numel(y) == 0) shape[0] = 0, sa[0] = sb_[0] = 0;
    args.path = path, args.mode = mode, args.op = op, args.max_threads = 1;
    args.ndim = rank;
    for (int d = 0; d < rank; ++d) {
        args.shape[d] = shape[d];
        args.a_stride[d] = sa[d];
        args.b_stride[d] = sb_[d];
    }
    return sb_binary_prepare(&args, call);
}

int sb_k_binary(const sb_run_ctx *R, int op, const sb_tval *a, const sb_tval *b, sb_tval *y)
{
    if (sb_vinfo_numel(&y->info) == 0) return SB_OK;
    sb_binary_call call;
    int status = sb_k_binary_prepare(R->mode, R->path, op, &a->info, &b->info, &y->info, &call);
    if (status) return status;
    sb_binary_run_prepared(&call, a->data, b->data, y->data, R->threads);
    return SB_OK;
}

int sb_k_binary_scalar(const sb_run_ctx *R, int op, const sb_tval *a, float b, sb_tval *y)
{
    sb_tval t;
    memset(&t, 0, sizeof t);
    t.info.dtype = SB_DT_FLOAT;
    t.data = &b;
    return sb_k_binary(R, op, a, &t, y);
}

int sb_k_unary_prepare(int mode, int path, int op, float param, int64_t count, sb_unary_call *call)
{
    uint32_t bits;
    memcpy(&bits, &param, 4);
    sb_unary_args args = {0};
    args.path = path, args.mode = mode, args.op = op, args.max_threads = 1, args.count = count;
    /* only these three read their parameter (sb_unary_args.param) */
    args.param = op == SB_OP_LEAKY_RELU || op == SB_OP_HARDSIGMOID_ONNX || op == SB_OP_ELU
                 ? (int64_t)bits : 0;
    return sb_unary_prepare(&args, call);
}

int sb_k_unary(const sb_run_ctx *R, int op, float param, const sb_tval *x, sb_tval *y)
{
    int64_t n = sb_vinfo_numel(&x->info);
    if (n == 0) return SB_OK;
    sb_unary_call call;
    int status = sb_k_unary_prepare(R->mode, R->path, op, param, n, &call);
    if (status) return status;
    sb_unary_run_prepared(&call, x->data, y->data, R->threads);
    return SB_OK;
}

/* The generic strided copy of any element size (sb_copy moves 4-byte
 * elements; 1- and 2-byte ones, and 8-byte ones whose walk has no room for
 * the extra dimension of two words, come here). */
static void copy_small(int rank, const int64_t *shape, int size, const uint8_t *x,
                       const int64_t *xs, uint8_t *y, const int64_t *ys)
{
    int64_t index[SB_MAX_RANK + 1] = {0};
    int64_t total = 1;
    for (int d = 0; d < rank; ++d) total *= shape[d];
    int64_t ox = 0, oy = 0;
    for (int64_t i = 0; i < total; ++i) {
        if (size == 1) y[oy] = x[ox];
        else memcpy(y + oy * size, x + ox * size, (size_t)size);
        for (int d = rank - 1; d >= 0; --d) {
            ox += xs[d], oy += ys[d];
            if (++index[d] < shape[d]) break;
            ox -= xs[d] * shape[d], oy -= ys[d] * shape[d];
            index[d] = 0;
        }
    }
}

int sb_k_copy(int threads, int rank, const int64_t *shape_in, int size, const void *x,
              const int64_t *x_strides, void *y, const int64_t *y_strides)
{
    int64_t shape[SB_MAX_RANK + 1], xs[SB_MAX_RANK + 1], ys[SB_MAX_RANK + 1];
    int64_t total = 1;
    for (int d = 0; d < rank; ++d) {
        shape[d] = shape_in[d], xs[d] = x_strides[d], ys[d] = y_strides[d];
        total *= shape[d];
    }
    if (total == 0) return SB_OK;
    int64_t *strides[2] = {xs, ys};
    rank = sb_merge_walk(rank, shape, 2, strides);
    if (size == 1 || size == 2 || (size == 8 && rank >= SB_MAX_BATCH_DIMS)) {
        copy_small(rank, shape, size, x, xs, y, ys);
        return SB_OK;
    }
    if (size == 8) {   /* two 4-byte words per element */
        for (int d = 0; d < rank; ++d) xs[d] *= 2, ys[d] *= 2;
        shape[rank] = 2, xs[rank] = 1, ys[rank] = 1;
        ++rank;
    }
    return sb_copy_words(threads, rank, shape, x, xs, y, ys);
}

int sb_k_expand(int threads, const sb_tval *x, sb_tval *y)
{
    int64_t xs[SB_MAX_RANK], ys[SB_MAX_RANK];
    sb_broadcast_strides(&x->info, &y->info, xs);
    sb_c_strides(&y->info, ys);
    return sb_k_copy(threads, y->info.rank, y->info.dims, sb_dtype_size(y->info.dtype), x->data,
                     xs, y->data, ys);
}

int sb_k_permute(int threads, const sb_tval *x, const int *perm, sb_tval *y)
{
    int64_t own[SB_MAX_RANK], xs[SB_MAX_RANK], ys[SB_MAX_RANK];
    sb_c_strides(&x->info, own);
    for (int d = 0; d < y->info.rank; ++d) xs[d] = own[perm[d]];
    sb_c_strides(&y->info, ys);
    return sb_k_copy(threads, y->info.rank, y->info.dims, sb_dtype_size(y->info.dtype), x->data,
                     xs, y->data, ys);
}

void sb_k_fill(void *data, int64_t count, int size, const void *value)
{
    uint8_t *p = data;
    for (int64_t i = 0; i < count; ++i) memcpy(p + i * size, value, (size_t)size);
}
