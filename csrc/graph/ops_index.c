/* ONNX operators: index-driven data movement and selection (GatherElements,
 * GatherND, ScatterElements and opset 9's Scatter, ScatterND, TopK,
 * NonMaxSuppression, OneHot, NonZero, Trilu) and Einsum, as docs/onnx.md
 * defines them.
 *
 * Every output element of the movers is a copy of one input element (its
 * bits: NaN payloads and -0 kept), whatever the element type. TopK and
 * NonMaxSuppression compare values; NonMaxSuppression's overlap is float32
 * arithmetic in the documented order. Einsum permutes its operands
 * (copies) and multiplies them with sb_matmul, as samebits.matmul does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"

/* ---- helpers ------------------------------------------------------------------ */

static void copy_elem(void *dst, int64_t di, const void *src, int64_t si, int size)
{
    switch (size) {
    case 1: ((uint8_t *)dst)[di] = ((const uint8_t *)src)[si]; break;
    case 2: ((uint16_t *)dst)[di] = ((const uint16_t *)src)[si]; break;
    case 4: ((uint32_t *)dst)[di] = ((const uint32_t *)src)[si]; break;
    default: ((uint64_t *)dst)[di] = ((const uint64_t *)src)[si]; break;
    }
}

/* Element i of an integer tensor as Python reads it, into text. */
static void int_text(const sb_tval *t, int64_t i, char *buf, size_t size)
{
    if (t->info.dtype == SB_DT_UINT64) snprintf(buf, size, "%llu", (unsigned long long)sb_int_at_u(t, i));
    else snprintf(buf, size, "%lld", (long long)sb_int_at(t, i));
}

/* Element i of an integer tensor as an int64: 0 when it is a uint64 beyond
 * int64's range (*v is then INT64_MAX, beyond every dimension). */
static int int_value(const sb_tval *t, int64_t i, int64_t *v)
{
    if (t->info.dtype == SB_DT_UINT64) {
        uint64_t u = sb_int_at_u(t, i);
        if (u > (uint64_t)INT64_MAX) { *v = INT64_MAX; return 0; }
        *v = (int64_t)u;
        return 1;
    }
    *v = sb_int_at(t, i);
    return 1;
}

/* An index checked against its dimension, negative ones counted from the
 * end; an SB_ERR_INDEX naming it otherwise. */
static int read_index(sb_run_ctx *R, const sb_tval *t, int64_t i, int64_t size, int64_t *out)
{
    int64_t v = 0;
    if (int_value(t, i, &v) && v >= -size && v < size) {
        *out = v < 0 ? v + size : v;
        return SB_OK;
    }
    char text[32];
    int_text(t, i, text, sizeof text);
    return sb_run_fail(R, SB_ERR_INDEX, "index %s is out of range for a dimension of size %lld",
                       text, (long long)size);
}

/* Advances a C-order coordinate over dims, keeping `offset` (sum of
 * coord[d] * strides[d]) in step. */
static void odometer(int rank, const int64_t *dims, int64_t *coord, const int64_t *strides,
                     int64_t *offset)
{
    for (int d = rank - 1; d >= 0; --d) {
        *offset += strides[d];
        if (++coord[d] < dims[d]) return;
        *offset -= strides[d] * dims[d];
        coord[d] = 0;
    }
}

/* Python's repr of a str (ASCII escapes; other bytes as they are). */
static void py_repr(const char *s, char *buf, size_t size)
{
    char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
    size_t at = 0;
    if (size < 8) { if (size) buf[0] = 0; return; }
    buf[at++] = q;
    for (; *s && at + 6 < size; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\' || c == (unsigned char)q) buf[at++] = '\\', buf[at++] = (char)c;
        else if (c == '\n') buf[at++] = '\\', buf[at++] = 'n';
        else if (c == '\t') buf[at++] = '\\', buf[at++] = 't';
        else if (c == '\r') buf[at++] = '\\', buf[at++] = 'r';
        else if (c < 0x20 || c == 0x7F) at += (size_t)snprintf(buf + at, size - at, "\\x%02x", c);
        else buf[at++] = (char)c;
    }
    buf[at++] = q;
    buf[at] = 0;
}

/* The value of a one-element integer input (K, k, depth); its size checked. */
static int one_value_shape(sb_infer_ctx *I, const sb_tval *t, const char *what)
{
    if (sb_vinfo_numel(&t->info) != 1) {
        char s[256];
        sb_shape_text(&t->info, s, sizeof s);
        return sb_infer_fail(I, SB_ERR_VALUE, "%s must hold one value, got shape %s", what, s);
    }
    return SB_OK;
}

static int no_reduction(sb_load_ctx *L)
{
    const char *reduction = sb_attr_str(L, "reduction", "none");
    if (L->status) return L->status;
    if (strcmp(reduction, "none") != 0) {
        char r[256];
        py_repr(reduction, r, sizeof r);
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "reduction %s is not supported ('none' is)", r);
    }
    return SB_OK;
}

/* ---- GatherElements, ScatterElements ------------------------------------------------ */

typedef struct { int64_t axis; } axis_state;

static int axis_load(sb_load_ctx *L, int64_t dflt)
{
    axis_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int(L, "axis", dflt);
    return L->status;
}

static int gather_elements_load(sb_load_ctx *L) { return axis_load(L, 0); }

static int scatter_elements_load(sb_load_ctx *L)
{
    int status = axis_load(L, 0);
    return status ? status : no_reduction(L);
}

/* The shape checks of _element_positions. */
static int element_shapes(sb_infer_ctx *I, const sb_vinfo *data, const sb_vinfo *idx, int axis)
{
    char ds[256], is[256];
    sb_shape_text(data, ds, sizeof ds);
    sb_shape_text(idx, is, sizeof is);
    if (idx->rank != data->rank)
        return sb_infer_fail(I, SB_ERR_VALUE, "indices %s must have the rank of the data %s", is, ds);
    for (int k = 0; k < data->rank; ++k)
        if (k != axis && idx->dims[k] > data->dims[k])
            return sb_infer_fail(I, SB_ERR_VALUE, "indices %s do not fit the data %s outside axis %d",
                                 is, ds, axis);
    if (data->rank == 0) return sb_infer_fail(I, SB_ERR_INDEX, "tuple index out of range");
    return SB_OK;
}

static int gather_elements_infer(sb_infer_ctx *I)
{
    const axis_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    const sb_tval *idx = sb_infer_int(I, 1, "indices");
    if (!idx) return I->n_in > 1 && I->in[1] ? SB_ERR_TYPE : SB_ERR_VALUE;
    int a, status = sb_infer_axis(I, s->axis, x->info.rank, "axis", &a);
    if (status) return status;
    if ((status = element_shapes(I, &x->info, &idx->info, a))) return status;
    I->out[0] = idx->info;
    I->out[0].dtype = x->info.dtype;
    return SB_OK;
}

/* Calls fn(position in data, element of idx) for each element of idx. */
static int element_walk(sb_run_ctx *R, const sb_vinfo *data, const sb_tval *idx, int axis,
                        int (*fn)(void *ctx, int64_t pos, int64_t i), void *ctx)
{
    int64_t xs[SB_MAX_RANK], bs[SB_MAX_RANK], coord[SB_MAX_RANK] = {0};
    sb_c_strides(data, xs);
    for (int d = 0; d < data->rank; ++d) bs[d] = d == axis ? 0 : xs[d];
    int64_t n = sb_vinfo_numel(&idx->info), base = 0;
    for (int64_t i = 0; i < n; ++i) {
        int64_t v = 0;
        int status = read_index(R, idx, i, data->dims[axis], &v);
        if (status) return status;
        if ((status = fn(ctx, base + v * xs[axis], i))) return status;
        odometer(idx->info.rank, idx->info.dims, coord, bs, &base);
    }
    return SB_OK;
}

typedef struct { const void *x; void *y; int size; const sb_tval *src; int dtype; } move_ctx;

static int take_one(void *c, int64_t pos, int64_t i)
{
    move_ctx *m = c;
    copy_elem(m->y, i, m->x, pos, m->size);
    return SB_OK;
}

static int put_one(void *c, int64_t pos, int64_t i)
{
    move_ctx *m = c;
    if (m->src->info.dtype == m->dtype) copy_elem(m->y, pos, m->src->data, i, m->size);
    else sb_int_store(m->y, m->dtype, pos, sb_int_at(m->src, i));
    return SB_OK;
}

static int gather_elements_run(sb_run_ctx *R)
{
    const axis_state *s = R->state;
    const sb_tval *x = R->in[0];
    int a = (int)((s->axis + x->info.rank) % x->info.rank);
    move_ctx m = {x->data, R->out[0]->data, sb_dtype_size(x->info.dtype), NULL, 0};
    return element_walk(R, &x->info, R->in[1], a, take_one, &m);
}

/* data and updates: both float32 or both integer tensors. */
static int scatter_types(sb_infer_ctx *I, const sb_tval *data, const sb_tval *upd)
{
    if ((data->info.dtype == SB_DT_FLOAT) != (upd->info.dtype == SB_DT_FLOAT))
        return sb_infer_fail(I, SB_ERR_TYPE, "data and updates must both be float32 or both integers");
    return SB_OK;
}

static int scatter_elements_infer(sb_infer_ctx *I)
{
    const axis_state *s = I->state;
    const sb_tval *data = sb_infer_input(I, 0, "data");
    if (!data) return SB_ERR_VALUE;
    const sb_tval *idx = sb_infer_int(I, 1, "indices");
    if (!idx) return I->n_in > 1 && I->in[1] ? SB_ERR_TYPE : SB_ERR_VALUE;
    const sb_tval *upd = sb_infer_input(I, 2, "updates");
    if (!upd) return SB_ERR_VALUE;
    if (!sb_vinfo_same_shape(&upd->info, &idx->info)) {
        char us[256], is[256];
        sb_shape_text(&upd->info, us, sizeof us);
        sb_shape_text(&idx->info, is, sizeof is);
        return sb_infer_fail(I, SB_ERR_VALUE, "updates %s must have the shape of indices %s", us, is);
    }
    int a, status = sb_infer_axis(I, s->axis, data->info.rank, "axis", &a);
    if (status) return status;
    if ((status = element_shapes(I, &data->info, &idx->info, a))) return status;
    if ((status = scatter_types(I, data, upd))) return status;
    I->out[0] = data->info;
    I->inplace = 0;
    return SB_OK;
}

static void copy_data(const sb_tval *x, sb_tval *y)
{
    int64_t bytes = sb_vinfo_bytes(&x->info);
    if (bytes > 0 && x->data != y->data) memcpy(y->data, x->data, (size_t)bytes);
}

static int scatter_elements_run(sb_run_ctx *R)
{
    const axis_state *s = R->state;
    const sb_tval *data = R->in[0];
    sb_tval *y = R->out[0];
    int a = (int)((s->axis + data->info.rank) % data->info.rank);
    copy_data(data, y);
    move_ctx m = {NULL, y->data, sb_dtype_size(data->info.dtype), R->in[2], data->info.dtype};
    return element_walk(R, &data->info, R->in[1], a, put_one, &m);
}

/* ---- GatherND, ScatterND ------------------------------------------------------------ */

typedef struct { int64_t batch_dims; } gather_nd_state;

static int gather_nd_load(sb_load_ctx *L)
{
    gather_nd_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->batch_dims = sb_attr_int(L, "batch_dims", 0);
    if (L->status) return L->status;
    if (s->batch_dims < 0)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "batch_dims=%lld must be >= 0", (long long)s->batch_dims);
    return SB_OK;
}

/* The shape checks of _nd_offsets. */
static int nd_shapes(sb_infer_ctx *I, const sb_vinfo *data, const sb_vinfo *idx, int64_t b)
{
    if (idx->rank == 0) return sb_infer_fail(I, SB_ERR_VALUE, "indices must have at least one dimension");
    int64_t m = idx->dims[idx->rank - 1];
    if (b + m > data->rank)
        return sb_infer_fail(I, SB_ERR_VALUE, "index tuples of length %lld (after %lld batch dimensions) "
                             "exceed the data's rank %d", (long long)m, (long long)b, data->rank);
    for (int k = 0; k < b; ++k)
        if (idx->dims[k] != data->dims[k]) {
            char is[256], ds[256];
            sb_shape_text(idx, is, sizeof is);
            sb_shape_text(data, ds, sizeof ds);
            return sb_infer_fail(I, SB_ERR_VALUE, "the batch dimensions of indices %s and data %s differ",
                                 is, ds);
        }
    return SB_OK;
}

/* Calls fn(flat offset of the block, tuple number) for each index tuple. */
static int nd_walk(sb_run_ctx *R, const sb_vinfo *data, const sb_tval *idx, int b,
                   int (*fn)(void *ctx, int64_t offset, int64_t t), void *ctx)
{
    int64_t xs[SB_MAX_RANK], bs[SB_MAX_RANK], coord[SB_MAX_RANK] = {0};
    sb_c_strides(data, xs);
    int outer_rank = idx->info.rank - 1;
    int64_t m = idx->info.dims[outer_rank];
    for (int d = 0; d < outer_rank; ++d) bs[d] = d < b ? xs[d] : 0;
    sb_vinfo outer = idx->info;
    outer.rank = outer_rank;
    int64_t tuples = sb_vinfo_numel(&outer), base = 0;
    if (sb_vinfo_numel(&idx->info) == 0 && m != 0) tuples = 0;
    for (int64_t t = 0; t < tuples; ++t) {
        int64_t offset = base;
        for (int64_t j = 0; j < m; ++j) {
            int d = b + (int)j;
            int64_t v = 0;
            int status = read_index(R, idx, t * m + j, data->dims[d], &v);
            if (status) return status;
            offset += v * xs[d];
        }
        int status = fn(ctx, offset, t);
        if (status) return status;
        odometer(outer_rank, outer.dims, coord, bs, &base);
    }
    return SB_OK;
}

static int gather_nd_infer(sb_infer_ctx *I)
{
    const gather_nd_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    const sb_tval *idx = sb_infer_int(I, 1, "indices");
    if (!idx) return I->n_in > 1 && I->in[1] ? SB_ERR_TYPE : SB_ERR_VALUE;
    int low = x->info.rank < idx->info.rank ? x->info.rank : idx->info.rank;
    if (s->batch_dims >= low) {
        char xs[256], is[256];
        sb_shape_text(&x->info, xs, sizeof xs);
        sb_shape_text(&idx->info, is, sizeof is);
        return sb_infer_fail(I, SB_ERR_VALUE, "batch_dims=%lld needs data %s and indices %s of higher rank",
                             (long long)s->batch_dims, xs, is);
    }
    int status = nd_shapes(I, &x->info, &idx->info, s->batch_dims);
    if (status) return status;
    int b = (int)s->batch_dims, m = (int)idx->info.dims[idx->info.rank - 1];
    sb_vinfo *y = &I->out[0];
    y->dtype = x->info.dtype;
    y->rank = idx->info.rank - 1 + x->info.rank - b - m;
    if (y->rank > SB_MAX_RANK) return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "the output's rank %d is above %d",
                                                    y->rank, SB_MAX_RANK);
    int r = 0;
    for (int d = 0; d < idx->info.rank - 1; ++d) y->dims[r++] = idx->info.dims[d];
    for (int d = b + m; d < x->info.rank; ++d) y->dims[r++] = x->info.dims[d];
    return SB_OK;
}

typedef struct { const sb_tval *x; void *y; int size; int64_t inner; int dtype; } block_ctx;

static int take_block(void *c, int64_t offset, int64_t t)
{
    block_ctx *b = c;
    memcpy((uint8_t *)b->y + t * b->inner * b->size, (const uint8_t *)b->x->data + offset * b->size,
           (size_t)(b->inner * b->size));
    return SB_OK;
}

static int put_block(void *c, int64_t offset, int64_t t)
{
    block_ctx *b = c;   /* x: the updates */
    if (b->x->info.dtype == b->dtype) {
        memmove((uint8_t *)b->y + offset * b->size, (const uint8_t *)b->x->data + t * b->inner * b->size,
                (size_t)(b->inner * b->size));
    } else {
        for (int64_t e = 0; e < b->inner; ++e)
            sb_int_store(b->y, b->dtype, offset + e, sb_int_at(b->x, t * b->inner + e));
    }
    return SB_OK;
}

static int64_t tail_size(const sb_vinfo *x, int from)
{
    int64_t n = 1;
    for (int d = from; d < x->rank; ++d) n *= x->dims[d];
    return n;
}

static int gather_nd_run(sb_run_ctx *R)
{
    const gather_nd_state *s = R->state;
    const sb_tval *x = R->in[0], *idx = R->in[1];
    int b = (int)s->batch_dims, m = (int)idx->info.dims[idx->info.rank - 1];
    block_ctx c = {x, R->out[0]->data, sb_dtype_size(x->info.dtype), tail_size(&x->info, b + m), 0};
    if (sb_vinfo_numel(&R->out[0]->info) == 0) c.inner = 0;
    return nd_walk(R, &x->info, idx, b, take_block, &c);
}

static int scatter_nd_load(sb_load_ctx *L) { return no_reduction(L); }

static int scatter_nd_infer(sb_infer_ctx *I)
{
    const sb_tval *data = sb_infer_input(I, 0, "data");
    if (!data) return SB_ERR_VALUE;
    const sb_tval *idx = sb_infer_int(I, 1, "indices");
    if (!idx) return I->n_in > 1 && I->in[1] ? SB_ERR_TYPE : SB_ERR_VALUE;
    const sb_tval *upd = sb_infer_input(I, 2, "updates");
    if (!upd) return SB_ERR_VALUE;
    int status = nd_shapes(I, &data->info, &idx->info, 0);
    if (status) return status;
    int m = (int)idx->info.dims[idx->info.rank - 1];
    sb_vinfo want = {0};
    want.rank = idx->info.rank - 1 + data->info.rank - m;
    int ok = want.rank <= SB_MAX_RANK, r = 0;
    for (int d = 0; ok && d < idx->info.rank - 1; ++d) want.dims[r++] = idx->info.dims[d];
    for (int d = m; ok && d < data->info.rank; ++d) want.dims[r++] = data->info.dims[d];
    if (!ok || !sb_vinfo_same_shape(&upd->info, &want)) {
        char us[256], ws[256] = "(...)", is[256], ds[256];
        sb_shape_text(&upd->info, us, sizeof us);
        if (ok) sb_shape_text(&want, ws, sizeof ws);
        sb_shape_text(&idx->info, is, sizeof is);
        sb_shape_text(&data->info, ds, sizeof ds);
        return sb_infer_fail(I, SB_ERR_VALUE, "updates %s must have shape %s (indices %s, data %s)",
                             us, ws, is, ds);
    }
    if ((status = scatter_types(I, data, upd))) return status;
    I->out[0] = data->info;
    I->inplace = 0;
    return SB_OK;
}

static int scatter_nd_run(sb_run_ctx *R)
{
    const sb_tval *data = R->in[0], *idx = R->in[1];
    sb_tval *y = R->out[0];
    copy_data(data, y);
    int m = (int)idx->info.dims[idx->info.rank - 1];
    block_ctx c = {R->in[2], y->data, sb_dtype_size(data->info.dtype), tail_size(&data->info, m),
                   data->info.dtype};
    if (sb_vinfo_numel(&data->info) == 0) c.inner = 0;
    return nd_walk(R, &data->info, idx, 0, put_block, &c);
}

/* ---- TopK --------------------------------------------------------------------------- */

typedef struct { int64_t axis, largest, k; int has_k; } topk_state;

/* An element as TopK sorts it: a key in the element's order (NaN above
 * every float, -0 equal to +0, as ONNX Runtime and numpy order them), and
 * its index, which breaks ties (the lower first). */
typedef struct {
    uint64_t key;
    int64_t j;
} tk_entry;

static int topk_load(sb_load_ctx *L)
{
    topk_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int(L, "axis", -1);
    s->largest = sb_attr_int(L, "largest", 1);
    sb_attr_int(L, "sorted", 1);   /* the outputs are always sorted, which sorted=0 permits */
    if (L->opset < 10) {
        s->k = sb_attr_int_req(L, "k");
        s->has_k = 1;
    }
    return L->status;
}

/* K, from the attribute or the input; SB_NEEDS_VALUES while unknown. */
static int topk_k(sb_infer_ctx *I, const topk_state *s, int64_t *k, int *huge)
{
    *huge = 0;
    if (s->has_k) { *k = s->k; return SB_OK; }
    if (I->n_in < 2 || !I->in[1]) return sb_infer_fail(I, SB_ERR_VALUE, "input K is missing");
    const sb_tval *ks = sb_infer_int(I, 1, "K");
    if (!ks) return SB_ERR_TYPE;
    int status = one_value_shape(I, ks, "K");
    if (status) return status;
    if (!ks->data) return SB_NEEDS_VALUES;
    if (!int_value(ks, 0, k)) *huge = 1;
    return SB_OK;
}

static int topk_infer(sb_infer_ctx *I)
{
    const topk_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "X");
    if (!x) return SB_ERR_VALUE;
    int64_t k = 0;
    int huge, status = topk_k(I, s, &k, &huge);
    if (status) return status;
    if (x->info.rank == 0) return sb_infer_fail(I, SB_ERR_VALUE, "X must have at least one dimension");
    int a;
    if ((status = sb_infer_axis(I, s->axis, x->info.rank, "axis", &a))) return status;
    int64_t size = x->info.dims[a];
    if (huge || k < 0 || k > size) {
        char kt[32], xs[256];
        if (huge) int_text(I->in[1], 0, kt, sizeof kt);
        else snprintf(kt, sizeof kt, "%lld", (long long)k);
        sb_shape_text(&x->info, xs, sizeof xs);
        return sb_infer_fail(I, SB_ERR_VALUE, "K=%s is outside 0..%lld (axis %d of %s)", kt,
                             (long long)size, a, xs);
    }
    I->out[0] = x->info;
    I->out[0].dims[a] = k;
    if (I->n_out > 1) {
        I->out[1] = I->out[0];
        I->out[1].dtype = SB_DT_INT64;
    }
    I->workspace = (size ? size : 1) * (int64_t)sizeof(tk_entry) + 64;
    return SB_OK;
}


/* Largest first, or smallest first; equal keys by index. */
static int tk_descending(const void *pa, const void *pb)
{
    const tk_entry *a = pa, *b = pb;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}
static int tk_ascending(const void *pa, const void *pb)
{
    const tk_entry *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

/* Element `at` of x as an unsigned key in its order (tk_entry). */
static uint64_t tk_key(const sb_tval *x, int64_t at)
{
    if (x->info.dtype == SB_DT_FLOAT) {
        float v = ((const float *)x->data)[at];
        if (v != v) return UINT64_MAX;
        if (v == 0.0f) v = 0.0f;              /* -0 sorts as +0 */
        uint32_t b;
        memcpy(&b, &v, sizeof b);
        return b >> 31 ? (uint64_t)(uint32_t)~b : (uint64_t)(b | 0x80000000u);
    }
    int64_t s = sb_int_at(x, at);
    /* (every unsigned type but uint64 reads back through int64 in its order) */
    return x->info.dtype == SB_DT_UINT64 ? (uint64_t)s : (uint64_t)s ^ ((uint64_t)1 << 63);
}

static int topk_run(sb_run_ctx *R)
{
    const topk_state *s = R->state;
    const sb_tval *x = R->in[0];
    sb_tval *vals = R->out[0], *inds = R->n_out > 1 ? R->out[1] : NULL;
    if (!vals && !inds) return SB_OK;
    int rank = x->info.rank;
    int a = (int)((s->axis + rank) % rank);
    int64_t size = x->info.dims[a];
    int64_t k = vals ? vals->info.dims[a] : inds->info.dims[a];
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < a; ++d) outer *= x->info.dims[d];
    for (int d = a + 1; d < rank; ++d) inner *= x->info.dims[d];
    if (k == 0 || outer == 0 || inner == 0) return SB_OK;
    int esz = sb_dtype_size(x->info.dtype);
    int (*cmp)(const void *, const void *) = s->largest ? tk_descending : tk_ascending;
    tk_entry *e = R->workspace;
    sb_fpenv env;   /* comparisons of subnormals as IEEE has them, whatever the caller's mode */
    sb_fpenv_enter(&env);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            int64_t base = o * size * inner + i;
            for (int64_t j = 0; j < size; ++j) {
                e[j].j = j;
                e[j].key = tk_key(x, base + j * inner);
            }
            qsort(e, (size_t)size, sizeof *e, cmp);
            for (int64_t slot = 0; slot < k; ++slot) {
                int64_t out_at = (o * k + slot) * inner + i;
                if (vals) copy_elem(vals->data, out_at, x->data, base + e[slot].j * inner, esz);
                if (inds) ((int64_t *)inds->data)[out_at] = e[slot].j;
            }
        }
    sb_fpenv_leave(&env);
    return SB_OK;
}

/* ---- Trilu ---------------------------------------------------------------------------- */

typedef struct { int64_t upper; } trilu_state;

static int trilu_load(sb_load_ctx *L)
{
    trilu_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->upper = sb_attr_int(L, "upper", 1);
    return L->status;
}

static int trilu_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    if (x->info.rank < 2) {
        char xs[256];
        sb_shape_text(&x->info, xs, sizeof xs);
        return sb_infer_fail(I, SB_ERR_VALUE, "input must have at least 2 dimensions, got %s", xs);
    }
    if (I->n_in > 1 && I->in[1]) {
        const sb_tval *k = sb_infer_int(I, 1, "k");
        if (!k) return SB_ERR_TYPE;
        int status = one_value_shape(I, k, "k");
        if (status) return status;
    }
    I->out[0] = x->info;
    I->inplace = 0;
    return SB_OK;
}

static int trilu_run(sb_run_ctx *R)
{
    const trilu_state *s = R->state;
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    int64_t k = 0;
    if (R->n_in > 1 && R->in[1]) int_value(R->in[1], 0, &k);   /* beyond int64: INT64_MAX */
    int rank = x->info.rank, esz = sb_dtype_size(x->info.dtype);
    int64_t rows = x->info.dims[rank - 2], cols = x->info.dims[rank - 1];
    int64_t n = sb_vinfo_numel(&x->info), plane = rows * cols;
    if (n == 0) return SB_OK;
    uint8_t *yd = y->data;
    const uint8_t *xd = x->data;
    for (int64_t p = 0; p < n; p += plane)
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) {
                int64_t at = p + i * cols + j;
                int keep = s->upper ? j - i >= k : j - i <= k;
                if (keep) {
                    if (yd != xd) copy_elem(yd, at, xd, at, esz);
                } else {
                    memset(yd + at * esz, 0, (size_t)esz);   /* +0, or integer 0 */
                }
            }
    return SB_OK;
}

/* ---- NonZero ---------------------------------------------------------------------------- */

static int nonzero_flag(const sb_tval *x, int64_t i)
{
    if (x->info.dtype == SB_DT_FLOAT) return (((const uint32_t *)x->data)[i] & 0x7FFFFFFFu) != 0;
    switch (sb_dtype_size(x->info.dtype)) {
    case 1: return ((const uint8_t *)x->data)[i] != 0;
    case 2: return ((const uint16_t *)x->data)[i] != 0;
    case 4: return ((const uint32_t *)x->data)[i] != 0;
    default: return ((const uint64_t *)x->data)[i] != 0;
    }
}

static int nonzero_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "X");
    if (!x) return SB_ERR_VALUE;
    int64_t n = sb_vinfo_numel(&x->info), count = 0;
    if (n > 0 && !x->data) return SB_NEEDS_VALUES;
    for (int64_t i = 0; i < n; ++i) count += nonzero_flag(x, i);
    I->out[0].dtype = SB_DT_INT64;
    I->out[0].rank = 2;
    I->out[0].dims[0] = x->info.rank ? x->info.rank : 1;
    I->out[0].dims[1] = count;
    return SB_OK;
}

static int nonzero_run(sb_run_ctx *R)
{
    const sb_tval *x = R->in[0];
    int64_t *y = R->out[0]->data;
    int64_t n = sb_vinfo_numel(&x->info), count = R->out[0]->info.dims[1], hit = 0;
    int rank = x->info.rank;
    int64_t coord[SB_MAX_RANK] = {0}, unused = 0, zero[SB_MAX_RANK] = {0};
    for (int64_t i = 0; i < n && hit < count; ++i) {
        if (nonzero_flag(x, i)) {
            for (int d = 0; d < rank; ++d) y[d * count + hit] = coord[d];
            if (rank == 0) y[hit] = 0;
            ++hit;
        }
        odometer(rank, x->info.dims, coord, zero, &unused);
    }
    return SB_OK;
}

/* ---- NonMaxSuppression ---------------------------------------------------------------- */

typedef struct { int64_t center; } nms_state;

static int nms_load(sb_load_ctx *L)
{
    nms_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->center = sb_attr_int(L, "center_point_box", 0);
    if (L->status) return L->status;
    if (s->center != 0 && s->center != 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "center_point_box=%lld must be 0 or 1", (long long)s->center);
    return SB_OK;
}

typedef struct {
    int64_t batches, n, classes, limit;
    float iou;
    int has_score, score_is_int;
    float score;
    int64_t score_int;
    int center;
    const float *boxes, *scores;
} nms_params;

typedef struct { float x0, x1, y0, y1; } nms_box;
typedef struct { float s; int64_t i; } nms_cand;

static float py_min(float a, float b) { return b < a ? b : a; }
static float py_max(float a, float b) { return b > a ? b : a; }

static nms_box box_extent(const float *box, int center)
{
    nms_box e;
    if (center) {
        float half_w = box[2] / 2.0f, half_h = box[3] / 2.0f;
        e.x0 = box[0] - half_w, e.x1 = box[0] + half_w;
        e.y0 = box[1] - half_h, e.y1 = box[1] + half_h;
    } else {
        e.x0 = py_min(box[1], box[3]), e.x1 = py_max(box[1], box[3]);
        e.y0 = py_min(box[0], box[2]), e.y1 = py_max(box[0], box[2]);
    }
    return e;
}

/* Whether box b's overlap with box a exceeds the threshold (float32 operations). */
static int suppresses(const nms_box *a, const nms_box *b, float iou)
{
    float ix_min = py_max(a->x0, b->x0), ix_max = py_min(a->x1, b->x1);
    if (ix_max <= ix_min) return 0;
    float iy_min = py_max(a->y0, b->y0), iy_max = py_min(a->y1, b->y1);
    if (iy_max <= iy_min) return 0;
    float w = ix_max - ix_min, h = iy_max - iy_min;
    float inter = w * h;
    if (inter <= 0.0f) return 0;
    float aw = a->x1 - a->x0, ah = a->y1 - a->y0, bw = b->x1 - b->x0, bh = b->y1 - b->y0;
    float area_a = aw * ah, area_b = bw * bh;
    float sum = area_a + area_b;
    float uni = sum - inter;
    if (area_a <= 0.0f || area_b <= 0.0f || uni <= 0.0f) return 0;
    float q = inter / uni;
    return q > iou;
}

/* Python's s > t for a float32 s and an integer t, exactly. */
static int above_int(float s, int64_t t)
{
    if (s != s) return 0;
    if (s >= 9223372036854775808.0f) return 1;
    if (s < -9223372036854775808.0f) return 0;
    double f = floor((double)s);
    int64_t fi = (int64_t)f;
    return fi > t || (fi == t && (double)s > f);
}

static int by_score(const void *pa, const void *pb)
{
    const nms_cand *a = pa, *b = pb;
    if (a->s != b->s) return a->s > b->s ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* The selection: its count, and the triples into out when not null.
 * scratch: n boxes, n candidates, n kept indices. */
static int64_t nms_pass(const nms_params *p, void *scratch, int64_t *out)
{
    int64_t n = p->n, count = 0;
    nms_box *ext = scratch;
    nms_cand *cand = (nms_cand *)(ext + n);
    int64_t *kept = (int64_t *)(cand + n);
    if (!p->limit) return 0;
    for (int64_t b = 0; b < p->batches; ++b) {
        for (int64_t i = 0; i < n; ++i) ext[i] = box_extent(p->boxes + (b * n + i) * 4, p->center);
        for (int64_t c = 0; c < p->classes; ++c) {
            const float *row = p->scores + (b * p->classes + c) * n;
            int64_t nc = 0;
            for (int64_t i = 0; i < n; ++i) {
                float s = row[i];
                if (s != s) continue;
                if (p->has_score && !(p->score_is_int ? above_int(s, p->score_int) : s > p->score)) continue;
                cand[nc].s = s, cand[nc].i = i;
                ++nc;
            }
            qsort(cand, (size_t)nc, sizeof *cand, by_score);
            int64_t nk = 0;
            for (int64_t q = 0; q < nc && nk < p->limit; ++q) {
                int64_t i = cand[q].i;
                int hit = 0;
                for (int64_t j = 0; j < nk && !hit; ++j) hit = suppresses(&ext[kept[j]], &ext[i], p->iou);
                if (!hit) kept[nk++] = i;
            }
            for (int64_t j = 0; j < nk; ++j) {
                if (out) {
                    out[count * 3] = b, out[count * 3 + 1] = c, out[count * 3 + 2] = kept[j];
                }
                ++count;
            }
        }
    }
    return count;
}

/* A one-value input of NMS: absent (0), its size checked, SB_NEEDS_VALUES
 * while unknown; 1 when present. */
static int nms_scalar(sb_infer_ctx *I, int i, const char *what, const sb_tval **out)
{
    *out = NULL;
    if (I->n_in <= i || !I->in[i]) return 0;
    const sb_tval *v = I->in[i];
    if (sb_vinfo_numel(&v->info) != 1) {
        char s[256];
        sb_shape_text(&v->info, s, sizeof s);
        return sb_infer_fail(I, SB_ERR_VALUE, "%s must hold one value, got shape %s", what, s);
    }
    if (!v->data) return SB_NEEDS_VALUES;
    *out = v;
    return 1;
}

static int nms_setup(sb_infer_ctx *I, nms_params *p)
{
    const nms_state *s = I->state;
    memset(p, 0, sizeof *p);
    const sb_tval *boxes = sb_infer_float(I, 0, "boxes");
    if (!boxes) return I->n_in > 0 && I->in[0] ? SB_ERR_TYPE : SB_ERR_VALUE;
    const sb_tval *scores = sb_infer_float(I, 1, "scores");
    if (!scores) return I->n_in > 1 && I->in[1] ? SB_ERR_TYPE : SB_ERR_VALUE;
    const sb_vinfo *bi = &boxes->info, *si = &scores->info;
    if (bi->rank != 3 || bi->dims[2] != 4 || si->rank != 3 || si->dims[0] != bi->dims[0] ||
        si->dims[2] != bi->dims[1]) {
        char bs[256], ss[256];
        sb_shape_text(bi, bs, sizeof bs);
        sb_shape_text(si, ss, sizeof ss);
        return sb_infer_fail(I, SB_ERR_VALUE, "boxes %s and scores %s must be (batches, boxes, 4) and "
                             "(batches, classes, boxes)", bs, ss);
    }
    const sb_tval *lim, *iou, *st;
    int status, need = 0;
    if ((status = nms_scalar(I, 2, "max_output_boxes_per_class", &lim)) < 0) return status;
    need |= status == SB_NEEDS_VALUES && !lim;
    if ((status = nms_scalar(I, 3, "iou_threshold", &iou)) < 0) return status;
    need |= status == SB_NEEDS_VALUES && !iou;
    if ((status = nms_scalar(I, 4, "score_threshold", &st)) < 0) return status;
    need |= status == SB_NEEDS_VALUES && !st;
    if (need) return SB_NEEDS_VALUES;
    p->batches = bi->dims[0], p->n = bi->dims[1], p->classes = si->dims[1];
    p->center = (int)s->center;
    /* the limit, as Python's min(max(limit, 0), n) and its `len(kept) == limit` */
    int64_t limit = 0;
    if (lim && lim->info.dtype == SB_DT_FLOAT) {
        float f = *(const float *)lim->data;
        if (f != f) limit = p->n;
        else if (f <= 0.0f) limit = 0;
        else if ((double)f >= (double)p->n || f != floorf(f)) limit = p->n;
        else limit = (int64_t)f;
    } else if (lim) {
        int64_t v;
        limit = !int_value(lim, 0, &v) || v > p->n ? p->n : v < 0 ? 0 : v;
    }
    p->limit = limit;
    double iou_v = 0.0;
    if (iou && iou->info.dtype == SB_DT_FLOAT) iou_v = *(const float *)iou->data;
    else if (iou) iou_v = iou->info.dtype == SB_DT_UINT64 ? (double)sb_int_at_u(iou, 0) : (double)sb_int_at(iou, 0);
    p->iou = (float)iou_v;
    if (!(p->iou >= 0.0f && p->iou <= 1.0f)) {
        char text[64];
        sb_py_float_repr((double)p->iou, text, sizeof text);
        return sb_infer_fail(I, SB_ERR_VALUE, "iou_threshold %s is outside [0, 1]", text);
    }
    if (st) {
        p->has_score = 1;
        if (st->info.dtype == SB_DT_FLOAT) p->score = *(const float *)st->data;
        else {
            p->score_is_int = 1;
            int64_t v;
            if (!int_value(st, 0, &v)) v = INT64_MAX;   /* no float32 score is above 2^63 - 1 but inf */
            p->score_int = v;
        }
    }
    int64_t total = sb_vinfo_numel(bi);
    if (total > 0 && !boxes->data) return SB_NEEDS_VALUES;
    if (sb_vinfo_numel(si) > 0 && !scores->data) return SB_NEEDS_VALUES;
    p->boxes = boxes->data, p->scores = scores->data;
    return SB_OK;
}

static int64_t nms_scratch_bytes(const nms_params *p)
{
    return p->n * (int64_t)(sizeof(nms_box) + sizeof(nms_cand) + sizeof(int64_t)) + 64;
}

static int nms_infer(sb_infer_ctx *I)
{
    nms_params p;
    sb_fpenv env;   /* IEEE float32 arithmetic, whatever the caller's rounding and flushing */
    sb_fpenv_enter(&env);
    int status = nms_setup(I, &p);
    sb_fpenv_leave(&env);
    if (status) return status;
    int64_t bytes = nms_scratch_bytes(&p);
    void *scratch = malloc((size_t)bytes);
    if (!scratch) return sb_infer_fail(I, SB_ERR_NO_MEMORY, "out of memory");
    sb_fpenv_enter(&env);
    int64_t count = nms_pass(&p, scratch, NULL);
    sb_fpenv_leave(&env);
    free(scratch);
    I->out[0].dtype = SB_DT_INT64;
    I->out[0].rank = 2;
    I->out[0].dims[0] = count;
    I->out[0].dims[1] = 3;
    I->workspace = bytes;
    return SB_OK;
}

static int nms_run(sb_run_ctx *R)
{
    /* the same setup as infer over the run's inputs (every one known now) */
    sb_infer_ctx I = {0};
    sb_vinfo unused[1];
    I.node = R->node, I.state = R->state, I.mode = R->mode, I.path = R->path;
    I.n_in = R->n_in, I.n_out = R->n_out, I.in = R->in, I.out = unused, I.inplace = -1;
    nms_params p;
    sb_fpenv env;
    sb_fpenv_enter(&env);
    int status = nms_setup(&I, &p);
    if (!status) nms_pass(&p, R->workspace, R->out[0]->data);
    sb_fpenv_leave(&env);
    return status == SB_NEEDS_VALUES ? SB_ERR_VALUE : status;
}

/* ---- OneHot ------------------------------------------------------------------------------ */

static int one_hot_load(sb_load_ctx *L) { return axis_load(L, -1); }

static int one_hot_indices_finite(sb_infer_ctx *I, const sb_tval *idx)
{
    if (idx->info.dtype != SB_DT_FLOAT || !idx->data) return SB_OK;
    int64_t n = sb_vinfo_numel(&idx->info);
    for (int64_t i = 0; i < n; ++i)
        if (!isfinite(((const float *)idx->data)[i]))
            return sb_infer_fail(I, SB_ERR_VALUE, "indices must be finite");
    return SB_OK;
}

static int one_hot_infer(sb_infer_ctx *I)
{
    const axis_state *s = I->state;
    const sb_tval *idx = sb_infer_input(I, 0, "indices");
    if (!idx) return SB_ERR_VALUE;
    int status = one_hot_indices_finite(I, idx);
    if (status) return status;
    const sb_tval *depth_t = sb_infer_input(I, 1, "depth");
    if (!depth_t) return SB_ERR_VALUE;
    if (sb_vinfo_numel(&depth_t->info) != 1) {
        char ds[256];
        sb_shape_text(&depth_t->info, ds, sizeof ds);
        return sb_infer_fail(I, SB_ERR_VALUE, "depth must hold one value, got shape %s", ds);
    }
    if (!depth_t->data) return SB_NEEDS_VALUES;
    int64_t depth;
    char dtext[64];
    if (depth_t->info.dtype == SB_DT_FLOAT) {
        float f = *(const float *)depth_t->data;
        if (f != f) return sb_infer_fail(I, SB_ERR_VALUE, "cannot convert float NaN to integer");
        if (isinf(f)) return sb_infer_fail(I, SB_ERR_VALUE, "cannot convert float infinity to integer");
        double t = trunc((double)f);
        depth = t >= 9.2e18 ? INT64_MAX : t <= -9.2e18 ? INT64_MIN : (int64_t)t;
        if (t > -9.2e18 && t < 9.2e18) snprintf(dtext, sizeof dtext, "%lld", (long long)depth);
        else snprintf(dtext, sizeof dtext, "%.0f", t);
    } else {
        if (!int_value(depth_t, 0, &depth)) depth = INT64_MAX;
        int_text(depth_t, 0, dtext, sizeof dtext);
    }
    if (depth < 1) return sb_infer_fail(I, SB_ERR_VALUE, "depth=%s must be positive", dtext);
    const sb_tval *pair = sb_infer_input(I, 2, "values");
    if (!pair) return SB_ERR_VALUE;
    if (sb_vinfo_numel(&pair->info) != 2) {
        char ps[256];
        sb_shape_text(&pair->info, ps, sizeof ps);
        return sb_infer_fail(I, SB_ERR_VALUE, "values must hold [off, on], got shape %s", ps);
    }
    int r = idx->info.rank + 1, a;
    if ((status = sb_infer_axis(I, s->axis, r, "axis", &a))) return status;
    if (r > SB_MAX_RANK) return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "the output's rank %d is above %d",
                                              r, SB_MAX_RANK);
    sb_vinfo *y = &I->out[0];
    y->dtype = pair->info.dtype;
    y->rank = r;
    for (int d = 0, k = 0; d < r; ++d) y->dims[d] = d == a ? depth : idx->info.dims[k++];
    if (sb_vinfo_numel(y) < 0) {
        char ys[256];
        sb_shape_text(y, ys, sizeof ys);
        return sb_infer_fail(I, SB_ERR_VALUE, "the output %s is too large", ys);
    }
    return SB_OK;
}

static int one_hot_run(sb_run_ctx *R)
{
    const axis_state *st = R->state;
    const sb_tval *idx = R->in[0], *pair = R->in[2];
    sb_tval *y = R->out[0];
    sb_infer_ctx I = {0};
    I.node = R->node;
    int status = one_hot_indices_finite(&I, idx);
    if (status) return status;
    int r = y->info.rank, a = (int)((st->axis + r) % r);
    int64_t depth = y->info.dims[a], outer = 1, inner = 1;
    for (int d = 0; d < a; ++d) outer *= idx->info.dims[d];
    for (int d = a; d < idx->info.rank; ++d) inner *= idx->info.dims[d];
    int esz = sb_dtype_size(pair->info.dtype);
    int64_t total = sb_vinfo_numel(&y->info);
    for (int64_t i = 0; i < total; ++i) copy_elem(y->data, i, pair->data, 0, esz);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            int64_t at = o * inner + i, v;
            if (idx->info.dtype == SB_DT_FLOAT) {
                float f = ((const float *)idx->data)[at];
                if (!(f > -4.0e18f && f < 4.0e18f)) continue;   /* beyond every depth */
                v = (int64_t)f;   /* toward zero, as int() */
            } else if (!int_value(idx, at, &v)) {
                continue;
            }
            if (v < 0) v += depth;
            if (v >= 0 && v < depth) copy_elem(y->data, (o * depth + v) * inner + i, pair->data, 1, esz);
        }
    return SB_OK;
}

/* ---- Einsum --------------------------------------------------------------------------------- */

/* A letter: an ASCII letter's code, or 256 + i for the i-th ellipsis letter
 * (Python's chr(0x391 + i), never in a subscript). */
#define ELL_COUNT 24
#define ELL_BASE 256
#define EIN_TERM 64

typedef struct {
    char text[EIN_TERM];          /* the term as written (spaces removed) */
    int ellipsis;                 /* has "..." */
    char head[EIN_TERM], tail[EIN_TERM];
} ein_term;

typedef struct {
    int n_terms, has_out;
    ein_term terms[2], out;
    const char *equation;         /* as written, for messages (session-owned) */
} einsum_state;

/* Writes a letter as Python prints it inside a repr (UTF-8 for the Greek ones). */
static size_t letter_text(int c, char *buf)
{
    if (c < ELL_BASE) { buf[0] = (char)c; return 1; }
    int cp = 0x391 + (c - ELL_BASE);
    buf[0] = (char)(0xC0 | (cp >> 6));
    buf[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
}

static void letters_text(const int *v, int n, char *buf, size_t size)
{
    size_t at = 0;
    for (int i = 0; i < n && at + 3 < size; ++i) at += letter_text(v[i], buf + at);
    buf[at] = 0;
}

static void letter_repr(int c, char *buf)
{
    size_t at = 0;
    buf[at++] = '\'';
    at += letter_text(c, buf + at);
    buf[at++] = '\'';
    buf[at] = 0;
}

/* One subscript checked (letters and one "..." at most, no letter twice) into t. */
static int ein_term_parse(sb_load_ctx *L, const char *eq_repr, const char *s, size_t len, ein_term *t)
{
    char raw[512], rr[600];
    size_t shown = len < sizeof raw - 1 ? len : sizeof raw - 1;
    memcpy(raw, s, shown);
    raw[shown] = 0;
    py_repr(raw, rr, sizeof rr);
    int seen[128] = {0}, ell = 0, bad = 0, repeat = 0;
    size_t hn = 0, tn = 0;
    for (size_t i = 0; i < len;) {
        if (i + 3 <= len && s[i] == '.' && s[i + 1] == '.' && s[i + 2] == '.') {
            ++ell;
            i += 3;
            continue;
        }
        unsigned char c = (unsigned char)s[i++];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) { bad = 1; continue; }
        if (seen[c]++) repeat = 1;
        if (!ell && hn < EIN_TERM - 1) t->head[hn++] = (char)c;
        else if (ell && tn < EIN_TERM - 1) t->tail[tn++] = (char)c;
    }
    if (bad)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "equation %s: subscript %s is not letters and '...'",
                            eq_repr, rr);
    if (repeat)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "equation %s: a repeated letter in %s (a diagonal) is "
                            "not supported", eq_repr, rr);
    if (ell > 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "equation %s: subscript %s has more than one '...'",
                            eq_repr, rr);
    t->head[hn] = 0, t->tail[tn] = 0;
    t->ellipsis = ell;
    memcpy(t->text, s, len);   /* at most 52 letters and "...": fits */
    t->text[len] = 0;
    return SB_OK;
}

static int einsum_load(sb_load_ctx *L)
{
    einsum_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    if (!sb_has_attr(L, "equation"))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "attribute 'equation' is required");
    const char *equation = sb_attr_str(L, "equation", "");
    if (L->status) return L->status;
    s->equation = equation;
    char er[1024];
    py_repr(equation, er, sizeof er);
    size_t n = strlen(equation);
    char *eq = malloc(n + 1);
    if (!eq) return sb_load_fail(L, SB_ERR_NO_MEMORY, "out of memory");
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) if (equation[i] != ' ') eq[m++] = equation[i];
    eq[m] = 0;
    char *arrow = strstr(eq, "->");
    if (arrow && strstr(arrow + 2, "->")) {
        free(eq);
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "equation %s: more than one '->'", er);
    }
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : m;
    /* every term is checked before the count of operands */
    int status = SB_OK, count = 0;
    size_t start = 0;
    for (size_t i = 0; i <= lhs_len && !status; ++i) {
        if (i < lhs_len && eq[i] != ',') continue;
        ein_term scratch;
        status = ein_term_parse(L, er, eq + start, i - start, count < 2 ? &s->terms[count] : &scratch);
        ++count;
        start = i + 1;
    }
    if (!status && arrow) {
        s->has_out = 1;
        status = ein_term_parse(L, er, arrow + 2, strlen(arrow + 2), &s->out);
    }
    free(eq);
    if (status) return status;
    if (count != 1 && count != 2)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "equation %s: %d operands (1 or 2 are supported)", er, count);
    s->n_terms = count;
    return SB_OK;
}

/* A term's letters for an operand of this rank. */
static int ein_letters(sb_infer_ctx *I, const ein_term *t, int rank, int *out)
{
    int hn = (int)strlen(t->head), tn = (int)strlen(t->tail);
    char tr[200];
    if (!t->ellipsis ? hn != rank : rank - hn - tn < 0) {
        py_repr(t->text, tr, sizeof tr);
        return sb_infer_fail(I, SB_ERR_VALUE, "subscript %s does not fit an operand of rank %d", tr, rank);
    }
    int extra = rank - hn - tn, n = 0;
    for (int i = 0; i < hn; ++i) out[n++] = (unsigned char)t->head[i];
    for (int i = ELL_COUNT - extra; i < ELL_COUNT; ++i) out[n++] = ELL_BASE + i;
    for (int i = 0; i < tn; ++i) out[n++] = (unsigned char)t->tail[i];
    return SB_OK;
}

static int find_letter(const int *v, int n, int c)
{
    for (int i = 0; i < n; ++i) if (v[i] == c) return i;
    return -1;
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* The plan of one Einsum call on these shapes. */
typedef struct {
    int n_ops;
    int letters[2][SB_MAX_RANK], rank[2];
    int out[SB_MAX_RANK], n_out;
    int64_t size[ELL_BASE + ELL_COUNT];   /* by letter; -1 when in no input */
    int batch[SB_MAX_RANK], rows[SB_MAX_RANK], cols[SB_MAX_RANK], con[SB_MAX_RANK];
    int nb_l, nr_l, nc_l, nk_l;
    int64_t nb, m, n, k;
} ein_plan;

static int64_t letters_size(const ein_plan *p, const int *v, int n)
{
    int64_t s = 1;
    for (int i = 0; i < n; ++i) s *= p->size[v[i]];
    return s;
}

static int ein_make(sb_infer_ctx *I, const einsum_state *s, const sb_tval *const *xs, int n_in, ein_plan *p)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < n_in; ++i) {
        char what[32];
        snprintf(what, sizeof what, "input %d", i);
        if (!xs[i]) return sb_infer_fail(I, SB_ERR_VALUE, "input %s is missing", what);
        if (!sb_infer_float(I, i, what)) return SB_ERR_TYPE;
    }
    if (n_in != s->n_terms) {
        char er[1024];
        py_repr(s->equation, er, sizeof er);
        return sb_infer_fail(I, SB_ERR_VALUE, "equation %s needs %d inputs, got %d", er, s->n_terms, n_in);
    }
    p->n_ops = n_in;
    for (int i = 0; i < n_in; ++i) {
        p->rank[i] = xs[i]->info.rank;
        int status = ein_letters(I, &s->terms[i], p->rank[i], p->letters[i]);
        if (status) return status;
    }
    for (int c = 0; c < ELL_BASE + ELL_COUNT; ++c) p->size[c] = -1;
    /* the output's letters */
    if (!s->has_out) {
        int counts[ELL_BASE + ELL_COUNT] = {0};
        for (int i = 0; i < n_in; ++i)
            for (int d = 0; d < p->rank[i]; ++d) counts[p->letters[i][d]]++;
        for (int c = ELL_BASE; c < ELL_BASE + ELL_COUNT; ++c) if (counts[c]) p->out[p->n_out++] = c;
        for (int c = 0; c < ELL_BASE; ++c) if (counts[c] == 1) p->out[p->n_out++] = c;
    } else {
        int seen[ELL_BASE + ELL_COUNT] = {0};
        for (int i = 0; i < n_in; ++i)
            for (int d = 0; d < p->rank[i]; ++d) seen[p->letters[i][d]] = 1;
        int n = 0, tmp[EIN_TERM * 2 + ELL_COUNT];
        for (const char *c = s->out.head; *c; ++c) tmp[n++] = (unsigned char)*c;
        if (s->out.ellipsis)
            for (int c = ELL_BASE; c < ELL_BASE + ELL_COUNT; ++c) if (seen[c]) tmp[n++] = c;
        for (const char *c = s->out.tail; *c; ++c) tmp[n++] = (unsigned char)*c;
        if (n > SB_MAX_RANK)
            return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "the output's rank %d is above %d", n, SB_MAX_RANK);
        memcpy(p->out, tmp, (size_t)n * sizeof *tmp);
        p->n_out = n;
    }
    if (p->n_out > SB_MAX_RANK)
        return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "the output's rank %d is above %d", p->n_out, SB_MAX_RANK);
    /* sizes: max(previous or 1, d) */
    for (int i = 0; i < n_in; ++i)
        for (int d = 0; d < p->rank[i]; ++d) {
            int c = p->letters[i][d];
            int64_t dim = xs[i]->info.dims[d], prev = p->size[c] < 0 ? 1 : p->size[c];
            if (prev != 1 && prev != dim && dim != 1) {
                char lr[16];
                letter_repr(c, lr);
                return sb_infer_fail(I, SB_ERR_VALUE, "axis %s has sizes %lld and %lld", lr,
                                     (long long)prev, (long long)dim);
            }
            p->size[c] = prev > dim ? prev : dim;
        }
    for (int j = 0; j < p->n_out; ++j)
        if (p->size[p->out[j]] < 0) {
            char lr[16];
            letter_repr(p->out[j], lr);
            return sb_infer_fail(I, SB_ERR_VALUE, "output letter %s is in no input", lr);
        }
    if (n_in == 1) {
        int a[SB_MAX_RANK], b[SB_MAX_RANK];
        memcpy(a, p->letters[0], sizeof a);
        memcpy(b, p->out, sizeof b);
        qsort(a, (size_t)p->rank[0], sizeof *a, by_int);
        qsort(b, (size_t)p->n_out, sizeof *b, by_int);
        if (p->rank[0] != p->n_out || memcmp(a, b, (size_t)p->n_out * sizeof *a)) {
            char lt[128], ot[128];
            letters_text(p->letters[0], p->rank[0], lt, sizeof lt);
            letters_text(p->out, p->n_out, ot, sizeof ot);
            return sb_infer_fail(I, SB_ERR_VALUE, "one-operand Einsum must keep every axis (a permutation); "
                                 "%s -> %s sums one", lt, ot);
        }
        return SB_OK;
    }
    const int *la = p->letters[0], *lb = p->letters[1];
    int ra = p->rank[0], rb = p->rank[1];
    for (int i = 0; i < ra + rb; ++i) {
        int c = i < ra ? la[i] : lb[i - ra];
        int in_out = find_letter(p->out, p->n_out, c) >= 0;
        int both = find_letter(la, ra, c) >= 0 && find_letter(lb, rb, c) >= 0;
        if (!in_out && !both) {
            char lr[16];
            letter_repr(c, lr);
            return sb_infer_fail(I, SB_ERR_VALUE, "letter %s is summed out of one operand alone (not supported)",
                                 lr);
        }
    }
    for (int j = 0; j < p->n_out; ++j) {
        int c = p->out[j], ia = find_letter(la, ra, c) >= 0, ib = find_letter(lb, rb, c) >= 0;
        if (ia && ib) p->batch[p->nb_l++] = c;
        else if (ia) p->rows[p->nr_l++] = c;
        else if (ib) p->cols[p->nc_l++] = c;
    }
    for (int i = 0; i < ra; ++i)
        if (find_letter(lb, rb, la[i]) >= 0 && find_letter(p->out, p->n_out, la[i]) < 0) p->con[p->nk_l++] = la[i];
    p->nb = letters_size(p, p->batch, p->nb_l), p->m = letters_size(p, p->rows, p->nr_l);
    p->k = letters_size(p, p->con, p->nk_l), p->n = letters_size(p, p->cols, p->nc_l);
    /* an operand with an empty axis is refused (not yet defined here) */
    for (int i = 0; i < 2; ++i)
        if (sb_vinfo_numel(&xs[i]->info) == 0) {
            char xs_text[256];
            sb_shape_text(&xs[i]->info, xs_text, sizeof xs_text);
            return sb_infer_fail(I, SB_ERR_TYPE, "input %d of shape %s is empty, which two-operand Einsum "
                                 "does not support", i, xs_text);
        }
    return SB_OK;
}

static int64_t round64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

static int ein_identity(const ein_plan *p)
{
    int order[3 * SB_MAX_RANK], n = 0;
    for (int i = 0; i < p->nb_l; ++i) order[n++] = p->batch[i];
    for (int i = 0; i < p->nr_l; ++i) order[n++] = p->rows[i];
    for (int i = 0; i < p->nc_l; ++i) order[n++] = p->cols[i];
    if (n != p->n_out) return 0;
    for (int i = 0; i < n; ++i) if (order[i] != p->out[i]) return 0;
    return 1;
}

static int einsum_infer(sb_infer_ctx *I)
{
    const einsum_state *s = I->state;
    ein_plan p;
    int status = ein_make(I, s, I->in, I->n_in, &p);
    if (status) return status;
    sb_vinfo *y = &I->out[0];
    y->dtype = SB_DT_FLOAT;
    y->rank = p.n_out;
    for (int j = 0; j < p.n_out; ++j)   /* one operand: its own dimensions, permuted */
        y->dims[j] = p.n_ops == 1 ? I->in[0]->info.dims[find_letter(p.letters[0], p.rank[0], p.out[j])]
                                  : p.size[p.out[j]];
    if (sb_vinfo_numel(y) < 0) return sb_infer_fail(I, SB_ERR_VALUE, "the output is too large");
    if (p.n_ops == 2) {
        int64_t a = p.nb * p.m * p.k, b = p.nb * p.k * p.n, c = p.nb * p.m * p.n;
        if (a > SB_MAX_ELEMENTS || b > SB_MAX_ELEMENTS || c > SB_MAX_ELEMENTS)
            return sb_infer_fail(I, SB_ERR_VALUE, "the operands are too large");
        I->workspace = round64(a * 4) + round64(b * 4) + (ein_identity(&p) ? 0 : round64(c * 4));
    }
    return SB_OK;
}

/* The operand's elements in the given letter order (a broadcast dimension of
 * 1 repeated to the letter's size), dense: a copy. */
static int ein_gather(sb_run_ctx *R, const ein_plan *p, const sb_tval *x, const int *lx, int rx,
                      const int *const *groups, const int *counts, float *dst)
{
    int64_t own[SB_MAX_RANK], shape[SB_MAX_RANK], xs[SB_MAX_RANK], ys[SB_MAX_RANK];
    sb_c_strides(&x->info, own);
    int r = 0;
    for (int g = 0; g < 3; ++g)
        for (int i = 0; i < counts[g]; ++i) {
            int c = groups[g][i], d = find_letter(lx, rx, c);
            shape[r] = p->size[c];
            xs[r] = x->info.dims[d] == 1 && shape[r] != 1 ? 0 : own[d];
            ++r;
        }
    int64_t step = 1;
    for (int d = r - 1; d >= 0; --d) ys[d] = step, step *= shape[d];
    return sb_k_copy(R->threads, r, shape, 4, x->data, xs, dst, ys);
}

static int einsum_run(sb_run_ctx *R)
{
    const einsum_state *s = R->state;
    ein_plan p;
    sb_infer_ctx I = {0};
    sb_vinfo unused[1];
    I.node = R->node, I.state = R->state, I.n_in = R->n_in, I.in = R->in, I.out = unused;
    int status = ein_make(&I, s, R->in, R->n_in, &p);
    if (status) return status;
    sb_tval *y = R->out[0];
    if (p.n_ops == 1) {
        int perm[SB_MAX_RANK];
        for (int j = 0; j < p.n_out; ++j) perm[j] = find_letter(p.letters[0], p.rank[0], p.out[j]);
        return sb_k_permute(R->threads, R->in[0], perm, y);
    }
    if (p.nb * p.m * p.n == 0) return SB_OK;
    if (p.k == 0) {
        memset(y->data, 0, (size_t)(p.nb * p.m * p.n * 4));
        return SB_OK;
    }
    float *a3 = R->workspace;
    float *b3 = (float *)((uint8_t *)a3 + round64(p.nb * p.m * p.k * 4));
    int identity = ein_identity(&p);
    float *c3 = identity ? y->data : (float *)((uint8_t *)b3 + round64(p.nb * p.k * p.n * 4));
    const int *ga[3] = {p.batch, p.rows, p.con}, *gb[3] = {p.batch, p.con, p.cols};
    int ca[3] = {p.nb_l, p.nr_l, p.nk_l}, cb[3] = {p.nb_l, p.nk_l, p.nc_l};
    if ((status = ein_gather(R, &p, R->in[0], p.letters[0], p.rank[0], ga, ca, a3))) return status;
    if ((status = ein_gather(R, &p, R->in[1], p.letters[1], p.rank[1], gb, cb, b3))) return status;
    /* samebits.matmul of the (nb, m, k) and (nb, k, n) arrays */
    sb_matmul_args args;
    memset(&args, 0, sizeof args);
    sb_batch batch;
    memset(&batch, 0, sizeof batch);
    args.path = R->path, args.mode = R->mode, args.max_threads = R->threads;
    args.m = p.m, args.n = p.n, args.k = p.k;
    args.a = (int64_t)(intptr_t)a3, args.a_row = p.k, args.a_col = 1;
    args.b = (int64_t)(intptr_t)b3, args.b_row = p.n, args.b_col = 1, args.b_packed = 0;
    args.c = (int64_t)(intptr_t)c3, args.c_row = p.n;
    if (p.nb > 1) {
        batch.ndim = 1;
        batch.shape[0] = p.nb;
        batch.a_stride[0] = p.m * p.k, batch.b_stride[0] = p.k * p.n, batch.c_stride[0] = p.m * p.n;
        args.batch = (int64_t)(intptr_t)&batch;
    }
    if ((status = sb_matmul(&args)))
        return sb_run_fail(R, status, "the matrix product failed (status %d)", status);
    if (identity) return SB_OK;
    /* the (batch, rows, cols) result permuted to the output's order */
    int order[3 * SB_MAX_RANK], n = 0, perm[SB_MAX_RANK];
    for (int i = 0; i < p.nb_l; ++i) order[n++] = p.batch[i];
    for (int i = 0; i < p.nr_l; ++i) order[n++] = p.rows[i];
    for (int i = 0; i < p.nc_l; ++i) order[n++] = p.cols[i];
    sb_tval c;
    c.info.dtype = SB_DT_FLOAT, c.info.rank = n, c.data = c3;
    for (int i = 0; i < n; ++i) c.info.dims[i] = p.size[order[i]];
    for (int j = 0; j < p.n_out; ++j) perm[j] = find_letter(order, n, p.out[j]);
    return sb_k_permute(R->threads, &c, perm, y);
}

const sb_op_def sb_ops_index[] = {
    {"GatherElements", gather_elements_load, gather_elements_infer, gather_elements_run, 0},
    {"GatherND", gather_nd_load, gather_nd_infer, gather_nd_run, 0},
    {"ScatterElements", scatter_elements_load, scatter_elements_infer, scatter_elements_run, 0},
    {"Scatter", scatter_elements_load, scatter_elements_infer, scatter_elements_run, 0},
    {"ScatterND", scatter_nd_load, scatter_nd_infer, scatter_nd_run, 0},
    {"TopK", topk_load, topk_infer, topk_run, 0},
    {"NonMaxSuppression", nms_load, nms_infer, nms_run, 0},
    {"OneHot", one_hot_load, one_hot_infer, one_hot_run, 0},
    {"NonZero", NULL, nonzero_infer, nonzero_run, 0},
    {"Trilu", trilu_load, trilu_infer, trilu_run, 0},
    {"Einsum", einsum_load, einsum_infer, einsum_run, 0},
    {0},
};
