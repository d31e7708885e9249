/* Size arithmetic that cannot wrap. Every helper returns 1 when the result is
 * representable (and stores it), 0 on overflow: one convention everywhere. */
#ifndef SB_CHECKED_H
#define SB_CHECKED_H

#include <stddef.h>
#include <stdint.h>

static inline int sb_mul_ok(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

static inline int sb_add_ok(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a) return 0;
    *out = a + b;
    return 1;
}

/* a * b * c */
static inline int sb_mul3_ok(size_t a, size_t b, size_t c, size_t *out)
{
    size_t ab;
    return sb_mul_ok(a, b, &ab) && sb_mul_ok(ab, c, out);
}

static inline size_t sb_ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }
static inline size_t sb_min_size(size_t a, size_t b) { return a < b ? a : b; }
static inline size_t sb_max_size(size_t a, size_t b) { return a > b ? a : b; }

/* Bytes rounded up to a whole number of 64-byte cache lines; 0 on overflow
 * (callers treat a zero from a nonzero size as "too large"). */
static inline size_t sb_round_up_64(size_t bytes)
{
    return bytes > SIZE_MAX - 63 ? 0 : (bytes + 63) & ~(size_t)63;
}

#endif
