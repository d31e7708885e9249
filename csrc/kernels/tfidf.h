/* TfIdfVectorizer's counting (ONNX TfIdfVectorizer, docs/onnx.md), callable
 * without a graph. A row of integers is scanned for the pool's n-grams: for
 * each skip distance d = 1 .. max_skip + 1 and each start s in order, the
 * n-grams x[s], x[s + d], .., x[s + (n - 1) d] inside the row with n from
 * the smallest length counted (min_gram; at d > 1 never 1: unigrams count
 * once) up to max_gram, each found in the pool adding 1 at its output
 * index. The weights: TF the count; IDF weight (or 1) where the count is
 * not 0, else 0; TFIDF weight * count (one float32 rounding), or the count. */
#ifndef SB_KERNELS_TFIDF_H
#define SB_KERNELS_TFIDF_H

#include <stdint.h>

enum { SB_TFIDF_TF = 0, SB_TFIDF_IDF = 1, SB_TFIDF_TFIDF = 2 };

typedef struct {
    int64_t count;               /* registered n-grams */
    const int64_t *length;       /* each one's n */
    const int64_t *start;        /* each one's first value in pool */
    const int64_t *index;        /* each one's output index */
    const int64_t *pool;
    int64_t min_gram, max_gram, max_skip, out_size;
    int mode;
    const float *weights;        /* out_size of them, or null */
} sb_tfidf_table;

/* counts: out_size int64 scratch; y: out_size float32. */
void sb_tfidf_row(const sb_tfidf_table *t, const int64_t *row, int64_t n, int64_t *counts, float *y);

#endif
