/* Integer reductions (int_reduce.h). */
#include <string.h>
#include "kernels/int_reduce.h"

#define MAX_RANK 64

typedef struct { uint64_t lo, hi; } u128;   /* two's complement */

static void add128(u128 *s, int64_t v, int is_unsigned)
{
    uint64_t u = (uint64_t)v;
    uint64_t lo = s->lo + u;
    s->hi += (lo < s->lo) + (!is_unsigned && v < 0 ? UINT64_MAX : 0);
    s->lo = lo;
}

/* Python's truncating s / n (n > 0), the quotient's low 64 bits. */
static int64_t div128(u128 s, uint64_t n)
{
    int neg = (int64_t)s.hi < 0;
    if (neg) {   /* magnitude */
        s.lo = ~s.lo + 1;
        s.hi = ~s.hi + (s.lo == 0);
    }
    uint64_t r = s.hi % n, q = 0;
    for (int i = 63; i >= 0; --i) {
        int top = (int)(r >> 63);
        r = (r << 1) | ((s.lo >> i) & 1);
        if (top || r >= n) {
            r -= n;
            q |= (uint64_t)1 << i;
        }
    }
    return (int64_t)(neg ? ~q + 1 : q);
}

/* Element i as a 64-bit integer (unsigned types zero-extended). */
static int64_t load(sb_int_type t, const void *x, int64_t i)
{
    const unsigned char *p = (const unsigned char *)x + i * t.size;
    switch (t.size) {
    case 1: { uint8_t v; memcpy(&v, p, 1); return t.is_signed ? (int8_t)v : v; }
    case 2: { uint16_t v; memcpy(&v, p, 2); return t.is_signed ? (int16_t)v : v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return t.is_signed ? (int32_t)v : (int64_t)v; }
    default: { uint64_t v; memcpy(&v, p, 8); return (int64_t)v; }
    }
}

/* v wrapped to the type (bool: v != 0) at element i. */
static void store(sb_int_type t, void *y, int64_t i, int64_t v)
{
    unsigned char *p = (unsigned char *)y + i * t.size;
    if (t.is_bool) { p[0] = v != 0; return; }
    switch (t.size) {
    case 1: { uint8_t w = (uint8_t)(uint64_t)v; memcpy(p, &w, 1); break; }
    case 2: { uint16_t w = (uint16_t)(uint64_t)v; memcpy(p, &w, 2); break; }
    case 4: { uint32_t w = (uint32_t)(uint64_t)v; memcpy(p, &w, 4); break; }
    default: { uint64_t w = (uint64_t)v; memcpy(p, &w, 8); break; }
    }
}

void sb_int_reduce(int op, sb_int_type type, int rank, const int64_t *dims,
                   const unsigned char *reduced, const void *x, void *y)
{
    int64_t xs[MAX_RANK];
    int64_t step = 1;
    for (int d = rank - 1; d >= 0; --d) xs[d] = step, step *= dims[d];
    int kd[MAX_RANK], rd[MAX_RANK], nk = 0, nr = 0;
    int64_t outer = 1, n = 1;
    for (int d = 0; d < rank; ++d) {
        if (reduced[d]) rd[nr++] = d, n *= dims[d];
        else kd[nk++] = d, outer *= dims[d];
    }
    const int is_signed = type.is_signed;
    int64_t kidx[MAX_RANK] = {0}, base_off = 0;
    for (int64_t o = 0; o < outer; ++o) {
        uint64_t acc = op == SB_IRED_PROD ? 1 : 0;
        u128 wide = {0, 0};
        int64_t best = 0;
        int64_t ridx[MAX_RANK] = {0}, off = base_off;
        for (int64_t j = 0; j < n; ++j) {
            int64_t v = load(type, x, off);
            uint64_t u = (uint64_t)v;
            switch (op) {
            case SB_IRED_SUM: acc += u; break;
            case SB_IRED_SUMSQ: acc += u * u; break;
            case SB_IRED_L1: acc += is_signed && v < 0 ? (uint64_t)0 - u : u; break;
            case SB_IRED_PROD: acc *= u; break;
            case SB_IRED_MEAN: add128(&wide, v, !is_signed); break;
            case SB_IRED_MAX:
                if (j == 0 || (is_signed ? v > best : u > (uint64_t)best)) best = v;
                break;
            case SB_IRED_MIN:
                if (j == 0 || (is_signed ? v < best : u < (uint64_t)best)) best = v;
                break;
            default: break;
            }
            for (int k = nr - 1; k >= 0; --k) {
                int d = rd[k];
                off += xs[d];
                if (++ridx[k] < dims[d]) break;
                off -= xs[d] * dims[d];
                ridx[k] = 0;
            }
        }
        int64_t result;
        if (op == SB_IRED_MAX || op == SB_IRED_MIN) result = best;
        else if (op == SB_IRED_MEAN) result = n ? div128(wide, (uint64_t)n) : 0;
        else result = (int64_t)acc;
        store(type, y, o, result);
        for (int k = nk - 1; k >= 0; --k) {
            int d = kd[k];
            base_off += xs[d];
            if (++kidx[k] < dims[d]) break;
            base_off -= xs[d] * dims[d];
            kidx[k] = 0;
        }
    }
}
