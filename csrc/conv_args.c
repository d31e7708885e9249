/* Reading and checking the argument array of sb_conv2d_argv (and of the naive
 * reference, which takes the same array). */
#include "samebits.h"
#include "conv_internal.h"

static int read_size(const int64_t *args, int index, size_t *out)
{
    if (args[index] < 0 || (uint64_t)args[index] > (uint64_t)SIZE_MAX) return 0;
    *out = (size_t)args[index];
    return 1;
}

/* floor((size + pads - dil*(k-1) - 1) / stride) + 1, or 0 when below 1. */
static size_t output_size(size_t size, size_t pad_before, size_t pad_after, size_t k,
                          size_t dil, size_t stride)
{
    size_t reach = dil * (k - 1) + 1;
    size_t padded = size + pad_before + pad_after;
    if (padded < reach) return 0;
    return (padded - reach) / stride + 1;
}

int sb_conv_parse(const int64_t *args, sb_conv_desc *d)
{
    static const int sizes[] = {SB_CONV_N, SB_CONV_C, SB_CONV_H, SB_CONV_W, SB_CONV_COUT,
                                SB_CONV_KH, SB_CONV_KW, SB_CONV_GROUPS, SB_CONV_STRIDE_H,
                                SB_CONV_STRIDE_W, SB_CONV_DIL_H, SB_CONV_DIL_W,
                                SB_CONV_PAD_TOP, SB_CONV_PAD_BOTTOM, SB_CONV_PAD_LEFT,
                                SB_CONV_PAD_RIGHT};
    size_t v[sizeof sizes / sizeof sizes[0]];
    if (!args) return SB_ERR_ARGUMENT;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        if (!read_size(args, sizes[i], &v[i]) || (uint64_t)v[i] > ((uint64_t)1 << 40))
            return SB_ERR_ARGUMENT;
    d->path = (int)args[SB_CONV_PATH];
    d->mode = (int)args[SB_CONV_MODE];
    d->max_threads = (int)args[SB_CONV_THREADS];
    d->n = v[0], d->c = v[1], d->h = v[2], d->w = v[3], d->cout = v[4];
    d->kh = v[5], d->kw = v[6], d->groups = v[7];
    d->stride_h = v[8], d->stride_w = v[9], d->dil_h = v[10], d->dil_w = v[11];
    d->pad_top = v[12], d->pad_bottom = v[13], d->pad_left = v[14], d->pad_right = v[15];
    if (d->mode != SB_MODE_FAST && d->mode != SB_MODE_EXACT) return SB_ERR_ARGUMENT;
    if (d->max_threads < 1) return SB_ERR_ARGUMENT;
    if (d->kh == 0 || d->kw == 0 || d->groups == 0 || d->stride_h == 0 || d->stride_w == 0 ||
        d->dil_h == 0 || d->dil_w == 0)
        return SB_ERR_ARGUMENT;
    if (d->c % d->groups || d->cout % d->groups) return SB_ERR_ARGUMENT;
    d->out_h = output_size(d->h, d->pad_top, d->pad_bottom, d->kh, d->dil_h, d->stride_h);
    d->out_w = output_size(d->w, d->pad_left, d->pad_right, d->kw, d->dil_w, d->stride_w);
    if (d->out_h == 0 || d->out_w == 0) return SB_ERR_ARGUMENT;
    int packed = args[SB_CONV_PACKED] != 0;
    const float *weights = (const float *)(intptr_t)args[SB_CONV_WEIGHTS];
    d->weights = packed ? NULL : weights;
    d->packed = packed ? weights : NULL;
    d->bias = (const float *)(intptr_t)args[SB_CONV_BIAS];
    d->activation = (int)args[SB_CONV_ACTIVATION];
    if (d->activation < SB_ACT_NONE || d->activation > SB_ACT_RELU6) return SB_ERR_ARGUMENT;
    d->x = (const float *)(intptr_t)args[SB_CONV_X];
    d->y = (float *)(intptr_t)args[SB_CONV_Y];
    size_t cin_g = d->c / d->groups;
    int empty_out = d->n == 0 || d->cout == 0;
    int empty_in = d->c == 0 || d->h == 0 || d->w == 0;
    if (!empty_out && !d->y) return SB_ERR_ARGUMENT;
    if (!empty_out && cin_g && !weights) return SB_ERR_ARGUMENT;
    if (!empty_out && !empty_in && !d->x) return SB_ERR_ARGUMENT;
    return SB_OK;
}
