/* The unique slices of a tensor (unique.h): one stable merge sort of the
 * slice indices, then the runs of equal slices. */
#include <string.h>
#include "kernels/unique.h"

static int element_cmp(const sb_unique_args *a, int64_t i, int64_t j)
{
    const uint8_t *p = (const uint8_t *)a->x + i * a->size, *q = (const uint8_t *)a->x + j * a->size;
    if (a->kind == SB_UNIQ_FLOAT32) {
        float u, v;
        memcpy(&u, p, 4), memcpy(&v, q, 4);
        int nu = u != u, nv = v != v;
        if (nu || nv) return nu - nv;   /* NaN above every number, equal to NaN */
        return (u > v) - (u < v);       /* -0 == +0 */
    }
    int sign = a->kind == SB_UNIQ_SIGNED;
    int64_t s, t;
    if (a->size == 8 && !sign) {
        uint64_t us, ut;
        memcpy(&us, p, 8), memcpy(&ut, q, 8);
        return (us > ut) - (us < ut);
    }
    if (a->size == 1) s = sign ? (int8_t)*p : *p, t = sign ? (int8_t)*q : *q;
    else if (a->size == 2) {
        uint16_t x, y;
        memcpy(&x, p, 2), memcpy(&y, q, 2);
        s = sign ? (int16_t)x : x, t = sign ? (int16_t)y : y;
    } else if (a->size == 4) {
        uint32_t x, y;
        memcpy(&x, p, 4), memcpy(&y, q, 4);
        s = sign ? (int32_t)x : (int64_t)x, t = sign ? (int32_t)y : (int64_t)y;
    } else {
        memcpy(&s, p, 8), memcpy(&t, q, 8);
    }
    return (s > t) - (s < t);
}

/* Slices i and j, lexicographically over their elements in C order. */
static int slice_cmp(const sb_unique_args *a, int64_t i, int64_t j)
{
    for (int64_t o = 0; o < a->outer; ++o)
        for (int64_t k = 0; k < a->inner; ++k) {
            int c = element_cmp(a, (o * a->n + i) * a->inner + k, (o * a->n + j) * a->inner + k);
            if (c) return c;
        }
    return 0;
}

/* Stable merge sort of the slice indices idx[0..m) (ascending), with tmp of m. */
static void merge_sort(int64_t *idx, int64_t *tmp, int64_t m, const sb_unique_args *a)
{
    for (int64_t width = 1; width < m; width *= 2) {
        for (int64_t lo = 0; lo < m; lo += 2 * width) {
            int64_t mid = lo + width < m ? lo + width : m, hi = lo + 2 * width < m ? lo + 2 * width : m;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                int take_right = slice_cmp(a, idx[j], idx[i]) < 0;
                tmp[k++] = take_right ? idx[j++] : idx[i++];
            }
            while (i < mid) tmp[k++] = idx[i++];
            while (j < hi) tmp[k++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t)m * sizeof *idx);
    }
}

int64_t sb_unique(const sb_unique_args *a, int64_t *first, int64_t *counts, int64_t *inverse,
                  int64_t *scratch)
{
    int64_t n = a->n, *order = scratch, *group = scratch + n;
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    merge_sort(order, group, n, a);
    /* the runs of equal slices in ascending order: group[i] = slice i's run */
    int64_t groups = 0;
    for (int64_t r = 0; r < n; ++r) {
        if (r == 0 || slice_cmp(a, order[r - 1], order[r]) != 0) ++groups;
        group[order[r]] = groups - 1;
    }
    /* the output's order: ascending runs, or runs by first occurrence; either
     * way one pass in index order finds each group's first slice and count */
    int64_t *id = order, next = 0;   /* (order is free now) run -> output group */
    for (int64_t g = 0; g < groups; ++g) id[g] = -1;
    if (a->sorted) for (int64_t g = 0; g < groups; ++g) id[g] = g;
    for (int64_t i = 0; i < n; ++i)
        if (id[group[i]] < 0) id[group[i]] = next++;
    if (first) for (int64_t k = 0; k < groups; ++k) first[k] = -1;
    if (counts) for (int64_t k = 0; k < groups; ++k) counts[k] = 0;
    for (int64_t i = 0; i < n; ++i) {
        int64_t k = id[group[i]];
        if (first && first[k] < 0) first[k] = i;
        if (counts) counts[k]++;
        if (inverse) inverse[i] = k;
    }
    return groups;
}
