/* TfIdfVectorizer's counting (tfidf.h): each candidate n-gram looked up in
 * the table (the last equal entry wins, as ONNX's reference trie keeps the
 * last id of a repeated n-gram). */
#include <string.h>
#include "kernels/tfidf.h"

static int64_t find(const sb_tfidf_table *t, const int64_t *row, int64_t s, int64_t d, int64_t n)
{
    for (int64_t k = t->count - 1; k >= 0; --k) {
        if (t->length[k] != n) continue;
        const int64_t *g = t->pool + t->start[k];
        int64_t i = 0;
        while (i < n && g[i] == row[s + i * d]) ++i;
        if (i == n) return t->index[k];
    }
    return -1;
}

void sb_tfidf_row(const sb_tfidf_table *t, const int64_t *row, int64_t n, int64_t *counts, float *y)
{
    memset(counts, 0, (size_t)t->out_size * sizeof *counts);
    int64_t smallest = t->min_gram;
    for (int64_t d = 1; d <= t->max_skip + 1 && smallest <= t->max_gram; ++d) {
        for (int64_t s = 0; s < n; ++s)
            for (int64_t len = smallest; len <= t->max_gram && s + (len - 1) * d < n; ++len) {
                int64_t at = find(t, row, s, d, len);
                if (at >= 0) counts[at] += 1;
            }
        if (smallest == 1) smallest = 2;
    }
    for (int64_t i = 0; i < t->out_size; ++i) {
        float w = t->weights ? t->weights[i] : 1.0f;
        if (t->mode == SB_TFIDF_TF) y[i] = (float)counts[i];
        else if (t->mode == SB_TFIDF_IDF) y[i] = counts[i] > 0 ? w : 0.0f;
        else y[i] = t->weights ? w * (float)counts[i] : (float)counts[i];
    }
}
