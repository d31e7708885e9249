/* ONNX Einsum (docs/onnx.md): the equation parsed at load, the letters
 * sorted into batch, row, contracted and column groups when a plan is made
 * (prepare), the contraction computed by kernels/einsum.c; one operand: a
 * permutation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "graph/ops/index/index_util.h"
#include "kernels/einsum.h"

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
    sb_py_cstr_repr(raw, rr, sizeof rr);
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
    sb_py_cstr_repr(equation, er, sizeof er);
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
        sb_py_cstr_repr(t->text, tr, sizeof tr);
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
        sb_py_cstr_repr(s->equation, er, sizeof er);
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

/* The kernel's call for a two-operand plan on these operands: each read in
 * its groups' letter order (a broadcast dimension of 1 repeated to the
 * letter's size), the product read back in the output's order. */
static void operand_walk(const ein_plan *p, const sb_vinfo *x, const int *lx, int rx,
                         const int *const *groups, const int *counts, int *rank, int64_t *shape,
                         int64_t *strides)
{
    int64_t own[SB_MAX_RANK];
    sb_c_strides(x, own);
    int r = 0;
    for (int g = 0; g < 3; ++g)
        for (int i = 0; i < counts[g]; ++i) {
            int c = groups[g][i], d = find_letter(lx, rx, c);
            shape[r] = p->size[c];
            strides[r] = x->dims[d] == 1 && shape[r] != 1 ? 0 : own[d];
            ++r;
        }
    *rank = r;
}

static void ein_call(const ein_plan *p, const sb_vinfo *a, const sb_vinfo *b, sb_einsum_call *c)
{
    memset(c, 0, sizeof *c);
    c->nb = p->nb, c->m = p->m, c->k = p->k, c->n = p->n;
    const int *ga[3] = {p->batch, p->rows, p->con}, *gb[3] = {p->batch, p->con, p->cols};
    int ca[3] = {p->nb_l, p->nr_l, p->nk_l}, cb[3] = {p->nb_l, p->nk_l, p->nc_l};
    operand_walk(p, a, p->letters[0], p->rank[0], ga, ca, &c->a_rank, c->a_shape, c->a_strides);
    operand_walk(p, b, p->letters[1], p->rank[1], gb, cb, &c->b_rank, c->b_shape, c->b_strides);
    /* the (batch, rows, cols) product's letters and C strides */
    int order[3 * SB_MAX_RANK], n = 0;
    for (int i = 0; i < p->nb_l; ++i) order[n++] = p->batch[i];
    for (int i = 0; i < p->nr_l; ++i) order[n++] = p->rows[i];
    for (int i = 0; i < p->nc_l; ++i) order[n++] = p->cols[i];
    int64_t own[3 * SB_MAX_RANK], step = 1;
    for (int i = n - 1; i >= 0; --i) own[i] = step, step *= p->size[order[i]];
    c->product_is_y = n == p->n_out;
    for (int j = 0; j < p->n_out; ++j) {
        int d = find_letter(order, n, p->out[j]);
        c->y_shape[j] = p->size[p->out[j]], c->y_strides[j] = own[d];
        if (d != j) c->product_is_y = 0;
    }
    c->y_rank = p->n_out;
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
        sb_einsum_call call;
        ein_call(&p, &I->in[0]->info, &I->in[1]->info, &call);
        I->workspace = sb_einsum_scratch_bytes(&call);
    }
    return SB_OK;
}

/* The plan and, for two operands, the kernel's call, from the inputs. */
static int ein_prepare_call(const sb_node *node, const void *state, const sb_tval *const *in, int n_in,
                            ein_plan *p, sb_einsum_call *call)
{
    sb_infer_ctx I = {0};
    sb_vinfo unused[1];
    I.node = node, I.state = state, I.n_in = n_in, I.in = in, I.out = unused;
    int status = ein_make(&I, state, in, n_in, p);
    if (status || p->n_ops != 2) return status;
    ein_call(p, &in[0]->info, &in[1]->info, call);
    return SB_OK;
}

static int einsum_prepare(sb_prepare_ctx *P)
{
    ein_plan p;
    sb_einsum_call *call = P->prepared;
    _Static_assert(sizeof(sb_einsum_call) <= SB_PREPARED_BYTES, "the call fits the prepared bytes");
    int status = ein_prepare_call(P->node, P->state, P->in, P->n_in, &p, call);
    if (status) return status;
    if (p.n_ops == 2) P->bytes = sizeof *call;
    return SB_OK;
}

static int einsum_run(sb_run_ctx *R)
{
    sb_einsum_call own;
    const sb_einsum_call *call = R->prepared;
    if (!call) {
        ein_plan p;
        int status = ein_prepare_call(R->node, R->state, R->in, R->n_in, &p, &own);
        if (status) return status;
        if (p.n_ops == 1) {   /* a permutation */
            int perm[SB_MAX_RANK];
            for (int j = 0; j < p.n_out; ++j) perm[j] = find_letter(p.letters[0], p.rank[0], p.out[j]);
            return sb_k_permute(R->threads, R->in[0], perm, R->out[0]);
        }
        call = &own;
    }
    int status = sb_einsum_run(call, R->path, R->mode, R->threads, R->in[0]->data, R->in[1]->data,
                               R->out[0]->data, R->workspace);
    return status ? sb_run_fail(R, status, "the matrix product failed (status %d)", status) : SB_OK;
}

const sb_op_def sb_op_Einsum = {
    .name = "Einsum", .load = einsum_load, .infer = einsum_infer, .run = einsum_run, .prepare = einsum_prepare};
