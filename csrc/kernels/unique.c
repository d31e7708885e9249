/* The unique slices of a tensor (unique.h): one stable merge sort of the
 * slice indices, then the runs of equal slices. */
#include <string.h>
#include "kernels/unique.h"
#include "framework/fpenv.h"

static int element_cmp(const sb_unique_args *a, int64_t i, int64_t j)
{
    uint64_t u = sb_order_key(a->x, a->kind, a->size, i), v = sb_order_key(a->x, a->kind, a->size, j);
    return (u > v) - (u < v);
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
    sb_fpenv env;   /* subnormals compare as IEEE has them (sb_order_key) */
    sb_fpenv_enter(&env);
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    merge_sort(order, group, n, a);
    /* the runs of equal slices in ascending order: group[i] = slice i's run */
    int64_t groups = 0;
    for (int64_t r = 0; r < n; ++r) {
        if (r == 0 || slice_cmp(a, order[r - 1], order[r]) != 0) ++groups;
        group[order[r]] = groups - 1;
    }
    sb_fpenv_leave(&env);
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
