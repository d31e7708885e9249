/* ONNX MatMul and Gemm (docs/onnx.md): sb_matmul with the operands' batch
 * layout, constant B packed at load. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "math/arith.h"
#include "graph/error.h"
#include "graph/py_text.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/nn/nn_util.h"

/* ---- matrix products ------------------------------------------------------------------- */

static const char SIGNATURE[] = "(n?,k),(k,m?)->(n?,m?)";

/* Packs B (k x n, element (p, j) at b[p * b_row + j * b_col]) for the path. */
static int pack_b(sb_load_ctx *L, const char *what, const char *name, const sb_tval *b, int64_t k,
                  int64_t n, int64_t b_row, int64_t b_col, const void **out)
{
    char t[128];
    if (k > LIMIT || n > LIMIT)
        return sb_load_fail(L, SB_ERR_VALUE, "%s: %s has shape %s; dimensions above 2**40 = %lld are "
                            "not supported", what, name, shape_text(&b->info, t, sizeof t),
                            (long long)LIMIT);
    size_t bytes = sb_packed_b_bytes(L->path, (size_t)k, (size_t)n);
    if (bytes == 0 && k && n)
        return sb_load_fail(L, SB_ERR_VALUE, "pack: b of shape %s is too large to pack (more than "
                            "2**62 bytes)", shape_text(&b->info, t, sizeof t));
    void *buf = sb_load_buffer(L, bytes > 64 ? bytes : 64);
    if (!buf) return L->status;
    if (k && n) {
        int status = sb_pack_b(L->path, L->threads > 0 ? L->threads : 1, (size_t)k, (size_t)n, b->data, (ptrdiff_t)b_row,
                               (ptrdiff_t)b_col, buf, bytes);
        if (status) return sb_load_fail(L, status, "%s failed (status %d)", what, status);
    }
    *out = buf;
    return SB_OK;
}

/* One sb_matmul call as _products._prepare makes it. */
typedef struct {
    sb_matmul_args args;
    sb_batch batch;
    int has_batch;
    sb_vinfo out;
} product_call;

/* Batch dimensions with extent-1 ones dropped and neighbours merged where
 * every operand steps through them as through one (_merge_batch). */
static int merge_batch(int rank, const int64_t *shape, const int64_t *sa, const int64_t *sb,
                       const int64_t *sc, sb_batch *out)
{
    int nd = 0;
    memset(out, 0, sizeof *out);
    for (int d = 0; d < rank; ++d) {
        int64_t extent = shape[d];
        if (extent == 1) continue;
        if (nd && out->a_stride[nd - 1] == sa[d] * extent && out->b_stride[nd - 1] == sb[d] * extent &&
            out->c_stride[nd - 1] == sc[d] * extent) {
            out->shape[nd - 1] *= extent;
            out->a_stride[nd - 1] = sa[d], out->b_stride[nd - 1] = sb[d], out->c_stride[nd - 1] = sc[d];
            continue;
        }
        out->shape[nd] = extent;
        out->a_stride[nd] = sa[d], out->b_stride[nd] = sb[d], out->c_stride[nd] = sc[d];
        ++nd;
    }
    out->ndim = nd;
    return nd;
}

/* Element strides of an operand's batch dimensions aligned to the batch
 * shape (0 where it broadcasts): _batch_strides. */
static void batch_strides(int nb, const int64_t *own_batch, int n_own, const int64_t *own_strides,
                          int64_t *out)
{
    int pad = nb - n_own;
    for (int d = 0; d < nb; ++d)
        out[d] = d < pad || own_batch[d - pad] == 1 ? 0 : own_strides[d - pad];
}

/* matmul(a, b) (b an (k, n) packed matrix when b_packed: b_info null) or
 * linear(a, packed, bias, activation) shaped as numpy's matmul: the call
 * and the output info, or the Python error. */
static int product_prepare(const sb_node *node, const char *what, const sb_vinfo *a,
                           const sb_vinfo *b, int64_t packed_k, int64_t packed_n, product_call *call)
{
    char t1[256], t2[256], t3[256];
    memset(call, 0, sizeof *call);
    if (a->rank == 0 || (b && b->rank == 0))
        return nfail(node, SB_ERR_VALUE, "%s: Input operand %d does not have enough dimensions (has "
                     "0, gufunc core with signature %s requires 1)", what, a->rank == 0 ? 0 : 1,
                     SIGNATURE);
    for (int d = 0; d < a->rank; ++d)
        if (a->dims[d] > LIMIT)
            return nfail(node, SB_ERR_VALUE, "%s: %s has shape %s; dimensions above 2**40 = %lld are "
                         "not supported", what, strcmp(what, "linear") ? "a" : "x",
                         shape_text(a, t1, sizeof t1), (long long)LIMIT);
    for (int d = 0; b && d < b->rank; ++d)
        if (b->dims[d] > LIMIT)
            return nfail(node, SB_ERR_VALUE, "%s: b has shape %s; dimensions above 2**40 = %lld are "
                         "not supported", what, shape_text(b, t1, sizeof t1), (long long)LIMIT);
    int64_t as[SB_MAX_RANK], bs[SB_MAX_RANK];
    sb_c_strides(a, as);
    /* the cores: (rows, cols, row stride, col stride); a 1-D a is a row, a 1-D b a column */
    int64_t m, k, a_row, a_col, kb, n, b_row = 0, b_col = 0;
    if (a->rank == 1) m = 1, k = a->dims[0], a_row = 0, a_col = as[0];
    else m = a->dims[a->rank - 2], k = a->dims[a->rank - 1], a_row = as[a->rank - 2], a_col = as[a->rank - 1];
    int b_vector = 0, nb_own = 0;
    const int64_t *b_batch = NULL;
    if (b) {
        sb_c_strides(b, bs);
        if (b->rank == 1) kb = b->dims[0], n = 1, b_row = bs[0], b_col = 0, b_vector = 1;
        else kb = b->dims[b->rank - 2], n = b->dims[b->rank - 1], b_row = bs[b->rank - 2],
             b_col = bs[b->rank - 1];
        nb_own = b->rank > 2 ? b->rank - 2 : 0;
        b_batch = b->dims;
    } else {
        kb = packed_k, n = packed_n;
    }
    int na = a->rank > 2 ? a->rank - 2 : 0;
    int nb = na > nb_own ? na : nb_own;
    int64_t batch[SB_MAX_RANK];
    for (int d = 0; d < nb; ++d) {
        int ia = d - (nb - na), ib = d - (nb - nb_own);
        int64_t x = ia >= 0 ? a->dims[ia] : 1, y = ib >= 0 ? b_batch[ib] : 1;
        if (x != y && x != 1 && y != 1) {
            char t4[256];   /* (b is there: a packed b has no batch dimensions) */
            return nfail(node, SB_ERR_VALUE, "%s: operands could not be broadcast together: batch "
                         "dimensions %s and %s of shapes %s and %s", what,
                         sb_py_tuple_text(a->dims, na, t1, sizeof t1),
                         sb_py_tuple_text(b->dims, nb_own, t2, sizeof t2),
                         shape_text(a, t3, sizeof t3), shape_text(b, t4, sizeof t4));
        }
        batch[d] = x == 1 ? y : x;
    }
    if (k != kb) {
        char ta[256], tb[256];
        if (!b) {
            int64_t wshape[2] = {n, kb};
            return nfail(node, SB_ERR_VALUE, "linear: x has %lld features (shape %s) but weight "
                         "(shape %s) takes %lld", (long long)k, shape_text(a, ta, sizeof ta),
                         sb_py_tuple_text(wshape, 2, tb, sizeof tb), (long long)kb);
        }
        return nfail(node, SB_ERR_VALUE, "%s: Input operand 1 has a mismatch in its core dimension 0, "
                     "with gufunc signature %s (size %lld is different from %lld): shapes %s and %s",
                     what, SIGNATURE, (long long)kb, (long long)k, shape_text(a, ta, sizeof ta),
                     shape_text(b, tb, sizeof tb));
    }
    sb_vinfo *out = &call->out;
    out->dtype = SB_DT_FLOAT;
    out->rank = 0;
    for (int d = 0; d < nb; ++d) out->dims[out->rank++] = batch[d];
    if (a->rank > 1) out->dims[out->rank++] = m;
    if (!b_vector) out->dims[out->rank++] = n;
    if (sb_vinfo_numel(out) < 0) {
        return nfail(node, SB_ERR_VALUE, "%s: the output would have shape %s; more than 2**40 "
                     "elements are not supported", what, shape_text(out, t1, sizeof t1));
    }
    int64_t cs[SB_MAX_RANK];
    sb_c_strides(out, cs);
    int64_t c_row = a->rank > 1 ? cs[nb] : 0;
    int64_t sa[SB_MAX_RANK], sbt[SB_MAX_RANK];
    batch_strides(nb, a->dims, na, as, sa);
    if (b) batch_strides(nb, b->dims, nb_own, bs, sbt);
    else for (int d = 0; d < nb; ++d) sbt[d] = 0;
    call->has_batch = nb ? merge_batch(nb, batch, sa, sbt, cs, &call->batch) > 0 : 0;
    sb_matmul_args *g = &call->args;
    g->m = m, g->n = n, g->k = k;
    g->a_row = a_row, g->a_col = a_col, g->b_row = b ? b_row : 0, g->b_col = b ? b_col : 0;
    g->b_packed = !b;
    g->c_row = c_row;
    return SB_OK;
}

/* Runs a prepared call: +0 everywhere for k = 0 without an epilogue; nothing
 * for an empty output. */
static int product_run(sb_run_ctx *R, product_call *call, const void *a, const void *b, float *c,
                       const float *bias, int64_t activation)
{
    if (sb_vinfo_numel(&call->out) == 0) return SB_OK;
    sb_matmul_args *g = &call->args;
    g->path = R->path, g->mode = R->mode, g->max_threads = R->threads;
    g->a = (int64_t)(intptr_t)a, g->b = (int64_t)(intptr_t)b, g->c = (int64_t)(intptr_t)c;
    g->bias = (int64_t)(intptr_t)bias, g->activation = activation;
    g->batch = call->has_batch ? (int64_t)(intptr_t)&call->batch : 0;
    int status = sb_matmul(g);
    return status ? sb_run_fail(R, status, "matmul failed (status %d)", status) : SB_OK;
}

/* ---- MatMul ------------------------------------------------------------------------------ */

typedef struct {
    int packed;
    const void *b;               /* B (k x n) packed */
    int64_t k, n;
    const float *bias;           /* an absorbed Add's (n values), or null */
    int64_t activation;
} matmul_state;

static int matmul_load(sb_load_ctx *L)
{
    matmul_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    const sb_tval *b = sb_load_const(L, 1);
    if (b && b->info.rank == 2 && b->info.dtype == SB_DT_FLOAT && sb_vinfo_numel(&b->info) > 0) {
        s->k = b->info.dims[0], s->n = b->info.dims[1];
        if (pack_b(L, "pack", "b", b, s->k, s->n, s->n, 1, &s->b)) return L->status;
        s->packed = 1;
        sb_load_consume(L, 1);
    }
    if (L->node->fused_bias >= 0) {
        const sb_tval *bias = sb_load_const_value(L, L->node->fused_bias);
        if (!bias || bias->info.dtype != SB_DT_FLOAT || !s->packed)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "the absorbed bias is not a float32 constant");
        s->bias = bias->data;
    }
    s->activation = L->node->activation;
    if (s->activation && !s->packed)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "a fused activation needs constant 2-D weights");
    return SB_OK;
}

static int matmul_geometry(const sb_node *node, const matmul_state *s, const sb_tval *const *in,
                           int n_in, product_call *call)
{
    const sb_tval *a = in[0];
    if (s->packed && a->info.rank >= 1) {
        if (a->info.dims[a->info.rank - 1] != s->k) {
            char ta[256], tb[64];
            int64_t bshape[2] = {s->k, s->n};
            return nfail(node, SB_ERR_VALUE, "A %s and B %s do not multiply",
                         shape_text(&a->info, ta, sizeof ta), sb_py_tuple_text(bshape, 2, tb, sizeof tb));
        }
        return product_prepare(node, "linear", &a->info, NULL, s->k, s->n, call);
    }
    const sb_tval *b = n_in > 1 ? in[1] : NULL;
    if (!b) return nfail(node, SB_ERR_VALUE, "input B is missing");
    if (b->info.dtype != SB_DT_FLOAT)
        return nfail(node, SB_ERR_TYPE, "input B must be float32, got %s", sb_dtype_name(b->info.dtype));
    return product_prepare(node, "matmul", &a->info, &b->info, 0, 0, call);
}

static int matmul_infer(sb_infer_ctx *I)
{
    int status = need_floats(I, 0, "A");
    if (status) return status;
    product_call call;
    status = matmul_geometry(I->node, I->state, I->in, I->n_in, &call);
    if (status) return status;
    I->out[0] = call.out;
    return SB_OK;
}

/* The product's geometry, then the kernel's call after it (its batch read
 * from the geometry's when prepared). */
typedef struct {
    product_call call;
    _Alignas(64) unsigned char kernel[];   /* sb_matmul_call_bytes() */
} matmul_prepared;

/* Whether the node runs a product for these operands (matmul_run's cases). */
static int runs_product(const matmul_state *s, const sb_vinfo *a, const product_call *call)
{
    if (sb_vinfo_numel(&call->out) == 0) return 0;
    if (s->packed && a->rank >= 1) return sb_vinfo_numel(a) != 0;
    return call->args.k != 0;
}

static int matmul_prepare(sb_prepare_ctx *P)
{
    const matmul_state *s = P->state;
    matmul_prepared *mp = P->prepared;
    size_t bytes = sizeof *mp + sb_matmul_call_bytes();
    if (bytes > SB_PREPARED_BYTES) return SB_OK;   /* (then each run prepares) */
    int status = matmul_geometry(P->node, s, P->in, P->n_in, &mp->call);
    if (status || !runs_product(s, &P->in[0]->info, &mp->call)) return status;
    int packed = s->packed && P->in[0]->info.rank >= 1;
    sb_matmul_args g = mp->call.args;
    g.path = P->path, g.mode = P->mode, g.max_threads = 1;
    g.activation = packed ? s->activation : 0;
    g.batch = mp->call.has_batch ? (int64_t)(intptr_t)&mp->call.batch : 0;
    status = sb_matmul_prepare(&g, (sb_matmul_call *)mp->kernel);
    if (status) return sb_fail(status, "node %d (%s): matmul failed (status %d)", P->node->index,
                               P->node->op_type, status);
    P->bytes = bytes;
    return SB_OK;
}

static int matmul_run(sb_run_ctx *R)
{
    const matmul_state *s = R->state;
    if (R->prepared) {
        const matmul_prepared *mp = R->prepared;
        int packed = s->packed && R->in[0]->info.rank >= 1;
        int status = sb_matmul_run_prepared((const sb_matmul_call *)mp->kernel, R->in[0]->data,
                                            packed ? s->b : R->in[1]->data, packed ? s->bias : NULL,
                                            R->out[0]->data, R->threads);
        return status ? sb_run_fail(R, status, "matmul failed (status %d)", status) : SB_OK;
    }
    product_call call;
    int status = matmul_geometry(R->node, s, R->in, R->n_in, &call);
    if (status) return status;
    sb_tval *y = R->out[0];
    int64_t count = sb_vinfo_numel(&y->info);
    if (count == 0) return SB_OK;
    if (s->packed && R->in[0]->info.rank >= 1) {
        if (sb_vinfo_numel(&R->in[0]->info) == 0) return SB_OK;
        return product_run(R, &call, R->in[0]->data, s->b, y->data, s->bias, s->activation);
    }
    if (call.args.k == 0) {   /* no terms: +0 */
        memset(y->data, 0, (size_t)count * 4);
        return SB_OK;
    }
    return product_run(R, &call, R->in[0]->data, R->in[1]->data, y->data, NULL, 0);
}

/* ---- Gemm --------------------------------------------------------------------------------- */

typedef struct {
    float alpha, beta;
    int64_t trans_a, trans_b;
    int packed;
    const void *b;               /* B as (k x n), packed */
    int64_t k, n;
    int64_t activation;
} gemm_state;

static int gemm_load(sb_load_ctx *L)
{
    gemm_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->alpha = sb_attr_float(L, "alpha", 1.0f);
    s->beta = sb_attr_float(L, "beta", 1.0f);
    s->trans_a = sb_attr_int(L, "transA", 0);
    s->trans_b = sb_attr_int(L, "transB", 0);
    if (L->opset < 7) sb_attr_ignore(L, "broadcast");
    if (L->status) return L->status;
    const sb_tval *b = sb_load_const(L, 1);
    if (b) {
        char t[256];
        if (b->info.dtype != SB_DT_FLOAT)
            return sb_load_fail(L, SB_ERR_TYPE, "input B must be float32, got %s",
                                sb_dtype_name(b->info.dtype));
        if (b->info.rank != 2)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "B must be 2-D, got %s",
                                shape_text(&b->info, t, sizeof t));
        int64_t r = b->info.dims[0], c = b->info.dims[1];
        int status = s->trans_b ? pack_b(L, "pack_linear", "weight", b, c, r, 1, c, &s->b)
                                : pack_b(L, "pack", "b", b, r, c, c, 1, &s->b);
        if (status) return L->status;
        s->k = s->trans_b ? c : r, s->n = s->trans_b ? r : c;
        s->packed = 1;
        sb_load_consume(L, 1);
    }
    s->activation = L->node->activation;
    if (s->activation && !s->packed)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "a fused activation needs constant weights");
    return SB_OK;
}

typedef struct {
    product_call call;
    sb_vinfo a;                  /* A as multiplied ((m, k): transposed for transA) */
    int fuse;                    /* C is linear's bias */
    int add;                     /* C (times beta) added after */
    sb_vinfo c, y;               /* C's info; the result's */
    int64_t at_bytes, cc_bytes, p_bytes;   /* workspace: A transposed, beta * C, the product */
} gemm_plan;

static int gemm_geometry(const sb_node *node, const gemm_state *s, const sb_tval *const *in, int n_in,
                         gemm_plan *p)
{
    char t1[256];
    memset(p, 0, sizeof *p);
    const sb_tval *a = in[0];
    if (a->info.rank != 2)
        return nfail(node, SB_ERR_VALUE, "A must be 2-D, got %s", shape_text(&a->info, t1, sizeof t1));
    p->a = a->info;
    if (s->trans_a) p->a.dims[0] = a->info.dims[1], p->a.dims[1] = a->info.dims[0];
    const sb_tval *c = n_in > 2 ? in[2] : NULL;
    p->fuse = s->packed && c && s->alpha == 1.0f && s->beta == 1.0f && c->info.rank == 1;
    int status;
    if (p->fuse) {
        if (c->info.dtype != SB_DT_FLOAT)
            return nfail(node, SB_ERR_TYPE, "input C must be float32, got %s",
                         sb_dtype_name(c->info.dtype));
    }
    if (s->packed) {
        if ((status = product_prepare(node, "linear", &p->a, NULL, s->k, s->n, &p->call))) return status;
        if (p->fuse && c->info.dims[0] != s->n) {
            char t2[64];
            int64_t w[2] = {s->n, s->k};
            return nfail(node, SB_ERR_VALUE, "linear: bias has shape %s, expected (%lld,) for weight "
                         "of shape %s", shape_text(&c->info, t1, sizeof t1), (long long)s->n,
                         sb_py_tuple_text(w, 2, t2, sizeof t2));
        }
    } else {
        const sb_tval *b = n_in > 1 ? in[1] : NULL;
        if (!b) return nfail(node, SB_ERR_VALUE, "input B is missing");
        if (b->info.dtype != SB_DT_FLOAT)
            return nfail(node, SB_ERR_TYPE, "input B must be float32, got %s",
                         sb_dtype_name(b->info.dtype));
        if (b->info.rank != 2)
            return nfail(node, SB_ERR_VALUE, "B must be 2-D, got %s", shape_text(&b->info, t1, sizeof t1));
        sb_vinfo bt = b->info;
        if (s->trans_b) bt.dims[0] = b->info.dims[1], bt.dims[1] = b->info.dims[0];
        if ((status = product_prepare(node, "matmul", &p->a, &bt, 0, 0, &p->call))) return status;
        if (s->trans_b) p->call.args.b_row = 1, p->call.args.b_col = b->info.dims[1];   /* b.T in place */
    }
    p->y = p->call.out;
    p->add = c && !p->fuse && s->beta != 0.0f;
    if (p->add) {
        if (c->info.dtype != SB_DT_FLOAT)
            return nfail(node, SB_ERR_TYPE, "input C must be float32, got %s",
                         sb_dtype_name(c->info.dtype));
        p->c = c->info;
        const sb_vinfo *both[2] = {&p->call.out, &c->info};
        if (sb_broadcast(both, 2, &p->y)) {
            char text[600];
            sb_broadcast_error_text(both, 2, text, sizeof text);
            return nfail(node, SB_ERR_VALUE, "%s", text);
        }
        p->y.dtype = SB_DT_FLOAT;
        if (s->beta != 1.0f) p->cc_bytes = (sb_vinfo_numel(&c->info) * 4 + 63) / 64 * 64;
        if (!sb_vinfo_same_shape(&p->y, &p->call.out))
            p->p_bytes = (sb_vinfo_numel(&p->call.out) * 4 + 63) / 64 * 64;
    }
    if (s->trans_a) p->at_bytes = (sb_vinfo_numel(&a->info) * 4 + 63) / 64 * 64;
    return SB_OK;
}

static int gemm_infer(sb_infer_ctx *I)
{
    int status = need_floats(I, 0, "A");
    if (status) return status;
    gemm_plan p;
    status = gemm_geometry(I->node, I->state, I->in, I->n_in, &p);
    if (status) return status;
    I->out[0] = p.y;
    I->workspace = p.at_bytes + p.cc_bytes + p.p_bytes;
    return SB_OK;
}

/* The geometry, then the product's kernel call after it when there is a
 * product to run (relocatable: the batch is read at prepare). */
typedef struct {
    gemm_plan p;
    int has_kernel;
    _Alignas(64) unsigned char kernel[];   /* sb_matmul_call_bytes() */
} gemm_prepared;

static int gemm_prepare(sb_prepare_ctx *P)
{
    const gemm_state *s = P->state;
    gemm_prepared *gp = P->prepared;
    if (sizeof *gp + sb_matmul_call_bytes() > SB_PREPARED_BYTES) return SB_OK;   /* (each run prepares) */
    int status = gemm_geometry(P->node, s, P->in, P->n_in, &gp->p);
    if (status) return status;
    P->bytes = sizeof *gp;
    if (!sb_vinfo_numel(&gp->p.call.out) || (!s->packed && gp->p.call.args.k == 0)) return SB_OK;
    sb_matmul_args g = gp->p.call.args;
    g.path = P->path, g.mode = P->mode, g.max_threads = 1;
    g.activation = s->packed ? s->activation : 0;
    g.batch = gp->p.call.has_batch ? (int64_t)(intptr_t)&gp->p.call.batch : 0;
    status = sb_matmul_prepare(&g, (sb_matmul_call *)gp->kernel);
    if (status) return sb_fail(status, "node %d (%s): matmul failed (status %d)", P->node->index,
                               P->node->op_type, status);
    gp->has_kernel = 1;
    P->bytes = sizeof *gp + sb_matmul_call_bytes();
    return SB_OK;
}

static int gemm_run(sb_run_ctx *R)
{
    const gemm_state *s = R->state;
    const gemm_prepared *gp = R->prepared;
    gemm_plan local;
    int status = SB_OK;
    if (!gp && (status = gemm_geometry(R->node, s, R->in, R->n_in, &local))) return status;
    const gemm_plan *p = gp ? &gp->p : &local;
    uint8_t *ws = R->workspace;
    const sb_tval *c = R->n_in > 2 ? R->in[2] : NULL;
    const void *a = R->in[0]->data;
    if (s->trans_a && sb_vinfo_numel(&R->in[0]->info)) {   /* A.T as a new C-ordered matrix */
        sb_tval at = {.info = p->a, .data = ws};
        static const int perm[2] = {1, 0};
        if ((status = sb_k_permute(R->threads, R->in[0], perm, &at)))
            return sb_run_fail(R, status, "permute failed (status %d)", status);
        a = ws;
    }
    sb_tval prod = {.info = p->call.out, .data = p->p_bytes ? ws + p->at_bytes + p->cc_bytes
                                                             : R->out[0]->data};
    int64_t count = sb_vinfo_numel(&prod.info);
    if (count) {
        const float *bias = s->packed && p->fuse ? c->data : NULL;
        if (gp && gp->has_kernel) {
            status = sb_matmul_run_prepared((const sb_matmul_call *)gp->kernel, a,
                                            s->packed ? s->b : R->in[1]->data, bias, prod.data,
                                            R->threads);
            if (status) return sb_run_fail(R, status, "matmul failed (status %d)", status);
        } else if (s->packed) {
            status = product_run(R, &local.call, a, s->b, prod.data, bias, s->activation);
        } else if (p->call.args.k == 0) {
            memset(prod.data, 0, (size_t)count * 4), status = SB_OK;
        } else {
            status = product_run(R, &local.call, a, R->in[1]->data, prod.data, NULL, 0);
        }
        if (status) return status;
    }
    if (s->alpha != 1.0f && (status = sb_k_binary_scalar(R, SB_BIN_MUL, &prod, s->alpha, &prod)))
        return sb_run_fail(R, status, "mul failed (status %d)", status);
    if (p->add) {
        sb_tval cc = *c;
        if (s->beta != 1.0f) {
            cc.data = ws + p->at_bytes;
            if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, c, s->beta, &cc)))
                return sb_run_fail(R, status, "mul failed (status %d)", status);
        }
        sb_tval y = {.info = p->y, .data = R->out[0]->data};
        if ((status = sb_k_binary(R, SB_BIN_ADD, &prod, &cc, &y)))
            return sb_run_fail(R, status, "add failed (status %d)", status);
    }
    return SB_OK;
}

const sb_op_def sb_op_Gemm = {
    .name = "Gemm", .load = gemm_load, .infer = gemm_infer, .run = gemm_run,
    .prepare = gemm_prepare};
const sb_op_def sb_op_MatMul = {
    .name = "MatMul", .load = matmul_load, .infer = matmul_infer, .run = matmul_run,
    .prepare = matmul_prepare};
