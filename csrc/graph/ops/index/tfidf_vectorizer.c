/* ONNX TfIdfVectorizer (docs/onnx.md): the pool's n-grams, numbered in
 * order across lengths (ngram_counts gives where each length starts), those
 * of lengths min_gram_length .. max_gram_length registered with their
 * output index (ngram_indexes); kernels/tfidf.c counts each row. The i-th
 * weight belongs to the i-th n-gram, so to output ngram_indexes[i]
 * (onnx.reference reads it by output position instead, which differs when
 * ngram_indexes is not 0, 1, 2, ...). Integer input only (pool_int64s;
 * string tensors are not supported). */
#include <string.h>
#include "graph/op.h"
#include "kernels/tfidf.h"

typedef struct { sb_tfidf_table t; } tfidf_state;

static int tfidf_load(sb_load_ctx *L)
{
    tfidf_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    sb_tfidf_table *t = &s->t;
    t->min_gram = sb_attr_int_req(L, "min_gram_length");
    t->max_gram = sb_attr_int_req(L, "max_gram_length");
    t->max_skip = sb_attr_int_req(L, "max_skip_count");
    const char *mode = sb_attr_str(L, "mode", "TF");
    if (L->status) return L->status;
    if (sb_has_attr(L, "pool_strings"))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "pool_strings is not supported (string tensors are "
                            "not; pool_int64s is)");
    t->mode = !strcmp(mode, "TF") ? SB_TFIDF_TF : !strcmp(mode, "IDF") ? SB_TFIDF_IDF
              : !strcmp(mode, "TFIDF") ? SB_TFIDF_TFIDF : -1;
    if (t->mode < 0) return sb_load_fail(L, SB_ERR_VALUE, "mode '%s' is not TF, IDF or TFIDF", mode);
    const int64_t *counts = NULL, *indexes = NULL, *pool = NULL;
    size_t nc = 0, ni = 0, np = 0;
    sb_attr_ints(L, "ngram_counts", &counts, &nc);
    sb_attr_ints(L, "ngram_indexes", &indexes, &ni);
    sb_attr_ints(L, "pool_int64s", &pool, &np);
    const float *w = NULL;
    size_t nw = 0;
    int has_w = sb_attr_floats(L, "weights", &w, &nw);
    if (L->status) return L->status;
    int64_t lim = (int64_t)1 << 40;
    if (t->min_gram < 1 || t->max_gram < t->min_gram || t->max_skip < 0 || t->max_gram > lim ||
        t->max_skip > lim)
        return sb_load_fail(L, SB_ERR_VALUE, "min_gram_length, max_gram_length and max_skip_count must "
                            "satisfy 1 <= min <= max and skip >= 0");
    /* every n-gram of the pool in order: length i + 1 from counts[i] */
    int64_t total = 0, out_size = 0;
    for (size_t i = 0; i < nc; ++i) {
        int64_t begin = counts[i], end = i + 1 < nc ? counts[i + 1] : (int64_t)np, n = (int64_t)i + 1;
        if (begin < 0 || end < begin || end > (int64_t)np || (end - begin) % n)
            return sb_load_fail(L, SB_ERR_VALUE, "ngram_counts does not split pool_int64s into n-grams");
        total += (end - begin) / n;
    }
    if ((size_t)total != ni)
        return sb_load_fail(L, SB_ERR_VALUE, "ngram_indexes has %zu values for %lld n-grams", ni,
                            (long long)total);
    for (size_t i = 0; i < ni; ++i) {
        if (indexes[i] < 0 || indexes[i] > lim)
            return sb_load_fail(L, SB_ERR_VALUE, "ngram_indexes must be in [0, 2**40]");
        if (indexes[i] + 1 > out_size) out_size = indexes[i] + 1;
    }
    if (has_w && nw != ni)
        return sb_load_fail(L, SB_ERR_VALUE, "weights has %zu values for %zu n-grams", nw, ni);
    int64_t *length = sb_load_buffer(L, (size_t)(total + 1) * 3 * sizeof(int64_t));
    if (!length) return L->status;
    int64_t *start = length + total + 1, *index = start + total + 1, k = 0, id = 0;
    for (size_t i = 0; i < nc; ++i) {
        int64_t begin = counts[i], end = i + 1 < nc ? counts[i + 1] : (int64_t)np, n = (int64_t)i + 1;
        for (int64_t at = begin; at < end; at += n, ++id) {
            if (n < t->min_gram || n > t->max_gram) continue;   /* numbered, not registered */
            length[k] = n, start[k] = at, index[k] = indexes[id], ++k;
        }
    }
    /* attribute values live only while the model loads: the state keeps copies */
    int64_t *pool_copy = sb_load_buffer(L, (np + 1) * sizeof *pool_copy);
    float *w_copy = has_w ? sb_load_buffer(L, ((size_t)out_size + 1) * sizeof *w_copy) : NULL;
    if (!pool_copy || (has_w && !w_copy)) return L->status;
    if (w_copy) memset(w_copy, 0, ((size_t)out_size + 1) * sizeof *w_copy);
    if (np) memcpy(pool_copy, pool, np * sizeof *pool_copy);
    /* the i-th weight is the i-th n-gram's (ONNX's text, and ONNX Runtime):
     * it weighs that n-gram's output ngram_indexes[i] */
    for (size_t i = 0; has_w && i < ni; ++i) w_copy[indexes[i]] = w[i];
    t->count = k, t->length = length, t->start = start, t->index = index, t->pool = pool_copy;
    t->out_size = out_size, t->weights = w_copy;
    return SB_OK;
}

static int tfidf_infer(sb_infer_ctx *I)
{
    const tfidf_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "X");
    if (!x) return SB_ERR_VALUE;
    if (x->info.dtype != SB_DT_INT64 && x->info.dtype != SB_DT_INT32)
        return sb_infer_fail(I, SB_ERR_TYPE, "X must be int32 or int64, got %s",
                             sb_dtype_name(x->info.dtype));
    if (x->info.rank > 2 || (x->info.rank == 2 && x->info.dims[0] < 1))
        return sb_infer_fail(I, SB_ERR_VALUE, "X must be [C] or [B, C] with B > 0");
    I->out[0] = (sb_vinfo){.dtype = SB_DT_FLOAT, .rank = x->info.rank == 2 ? 2 : 1};
    if (x->info.rank == 2) I->out[0].dims[0] = x->info.dims[0];
    I->out[0].dims[I->out[0].rank - 1] = s->t.out_size;
    int64_t c = x->info.rank ? x->info.dims[x->info.rank - 1] : 1;
    I->workspace = 8 * (s->t.out_size + c);
    return SB_OK;
}

static int tfidf_run(sb_run_ctx *R)
{
    const tfidf_state *s = R->state;
    const sb_tval *x = R->in[0];
    int64_t rows = x->info.rank == 2 ? x->info.dims[0] : 1;
    int64_t c = x->info.rank ? x->info.dims[x->info.rank - 1] : 1;
    int64_t *counts = R->workspace, *row = counts + s->t.out_size;
    float *y = R->out[0]->data;
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < c; ++i) row[i] = sb_int_at(x, r * c + i);
        sb_tfidf_row(&s->t, row, c, counts, y + r * s->t.out_size);
    }
    return SB_OK;
}

const sb_op_def sb_op_TfIdfVectorizer = {
    .name = "TfIdfVectorizer", .load = tfidf_load, .infer = tfidf_infer, .run = tfidf_run};
