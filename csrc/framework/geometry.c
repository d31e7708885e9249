/* The sliding window's output size and an NCHW operation's counts (geometry.h). */
#include "samebits.h"
#include "framework/geometry.h"
#include "framework/checked.h"

int64_t sb_window_output_size(int64_t size, int64_t pad_before, int64_t pad_after, int64_t kernel,
                              int64_t dilation, int64_t stride)
{
    const int64_t limit = SB_MAX_SIZE;
    if (size < 0 || pad_before < 0 || pad_after < 0 || size > limit || pad_before > limit ||
        pad_after > limit || kernel < 1 || dilation < 1 || stride < 1 || kernel > limit ||
        dilation > limit || stride > limit)
        return -1;
    int64_t padded = size + pad_before + pad_after;   /* <= 3 * 2^40 */
    if (padded < 1) return 0;
    /* The window spans dilation*(kernel-1) + 1 positions; it fits when
     * dilation*(kernel-1) <= padded - 1, tested without the product. */
    if (kernel > 1 && dilation > (padded - 1) / (kernel - 1)) return 0;
    return (padded - 1 - dilation * (kernel - 1)) / stride + 1;
}

int sb_nchw_counts(int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh, int64_t ow,
                   size_t *plane_in, size_t *rows)
{
    size_t planes, total_in, total_out;
    return sb_mul_ok((size_t)n, (size_t)c, &planes) && sb_mul_ok((size_t)h, (size_t)w, plane_in) &&
           sb_mul_ok(planes, *plane_in, &total_in) && total_in <= SIZE_MAX / sizeof(float) &&
           sb_mul_ok(planes, (size_t)oh, rows) && sb_mul_ok(*rows, (size_t)ow, &total_out) &&
           total_out <= SIZE_MAX / sizeof(float);
}
