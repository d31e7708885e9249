/* TopK over lines (topk.h): one sort of (key, index) entries per line. */
#include <stdlib.h>
#include <string.h>
#include "framework/fpenv.h"
#include "kernels/topk.h"

/* Largest first, or smallest first; equal keys by index. */
static int descending(const void *pa, const void *pb)
{
    const sb_topk_entry *a = pa, *b = pb;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

static int ascending(const void *pa, const void *pb)
{
    const sb_topk_entry *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

uint64_t sb_order_key(const void *x, int kind, int size, int64_t at)
{
    const unsigned char *p = (const unsigned char *)x + at * size;
    if (kind == SB_TOPK_FLOAT32) {
        float v;
        memcpy(&v, p, sizeof v);
        if (v != v) return UINT64_MAX;
        if (v == 0.0f) v = 0.0f;              /* -0 sorts as +0 */
        uint32_t b;
        memcpy(&b, &v, sizeof b);
        return b >> 31 ? (uint64_t)(uint32_t)~b : (uint64_t)(b | 0x80000000u);
    }
    uint64_t u = 0;
    int64_t s = 0;
    switch (size) {
    case 1: { uint8_t v; memcpy(&v, p, 1); u = v; s = (int8_t)v; break; }
    case 2: { uint16_t v; memcpy(&v, p, 2); u = v; s = (int16_t)v; break; }
    case 4: { uint32_t v; memcpy(&v, p, 4); u = v; s = (int32_t)v; break; }
    default: { uint64_t v; memcpy(&v, p, 8); u = v; s = (int64_t)v; break; }
    }
    /* signed: the sign bit flipped puts negatives below positives */
    return kind == SB_TOPK_SIGNED ? (uint64_t)s ^ ((uint64_t)1 << 63) : u;
}

void sb_topk(const void *x, int kind, int elem_size, int64_t outer, int64_t size, int64_t inner,
             int64_t k, int largest, void *vals, int64_t *inds, sb_topk_entry *scratch)
{
    if (k == 0 || outer == 0 || inner == 0 || (!vals && !inds)) return;
    int (*cmp)(const void *, const void *) = largest ? descending : ascending;
    sb_fpenv env;
    sb_fpenv_enter(&env);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            int64_t base = o * size * inner + i;
            for (int64_t j = 0; j < size; ++j) {
                scratch[j].j = j;
                scratch[j].key = sb_order_key(x, kind, elem_size, base + j * inner);
            }
            qsort(scratch, (size_t)size, sizeof *scratch, cmp);
            for (int64_t slot = 0; slot < k; ++slot) {
                int64_t out_at = (o * k + slot) * inner + i;
                int64_t from = base + scratch[slot].j * inner;
                if (vals)
                    memcpy((unsigned char *)vals + out_at * elem_size,
                           (const unsigned char *)x + from * elem_size, (size_t)elem_size);
                if (inds) inds[out_at] = scratch[slot].j;
            }
        }
    sb_fpenv_leave(&env);
}
