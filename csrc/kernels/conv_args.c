/* Reading and checking the argument structure of sb_conv2d (and of the naive
 * reference and the plan, which take the same structure). */
#include "kernels/conv_internal.h"
#include "framework/checked.h"
#include "framework/epilogue.h"
#include "framework/geometry.h"
#include "framework/threads.h"

static int size_arg(int64_t v, size_t *out)
{
    if (v < 0 || v > SB_MAX_SIZE || (uint64_t)v > (uint64_t)SIZE_MAX) return 0;
    *out = (size_t)v;
    return 1;
}

int sb_conv_parse_call(const sb_conv2d_args *args, sb_conv_desc *d)
{
    if (!args) return SB_ERR_ARGUMENT;
    const int64_t sizes[] = {args->n, args->c, args->h, args->w, args->cout, args->kh, args->kw,
                             args->groups, args->stride_h, args->stride_w, args->dil_h,
                             args->dil_w, args->pad_top, args->pad_bottom, args->pad_left,
                             args->pad_right};
    size_t v[sizeof sizes / sizeof sizes[0]];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        if (!size_arg(sizes[i], &v[i])) return SB_ERR_ARGUMENT;
    d->path = args->path >= 0 && args->path < sb_path_count() ? (int)args->path : -1;
    d->isa = NULL;
    d->mode = (int)args->mode;
    d->max_threads = sb_thread_cap(args->max_threads);
    d->n = v[0], d->c = v[1], d->h = v[2], d->w = v[3], d->cout = v[4];
    d->kh = v[5], d->kw = v[6], d->groups = v[7];
    d->stride_h = v[8], d->stride_w = v[9], d->dil_h = v[10], d->dil_w = v[11];
    d->pad_top = v[12], d->pad_bottom = v[13], d->pad_left = v[14], d->pad_right = v[15];
    if (args->mode != SB_MODE_FAST && args->mode != SB_MODE_EXACT) return SB_ERR_ARGUMENT;
    if (args->max_threads < 1) return SB_ERR_ARGUMENT;
    if (d->kh == 0 || d->kw == 0 || d->groups == 0) return SB_ERR_ARGUMENT;
    if (d->c % d->groups || d->cout % d->groups) return SB_ERR_ARGUMENT;
    int64_t out_h = sb_window_output_size(args->h, args->pad_top, args->pad_bottom, args->kh,
                                          args->dil_h, args->stride_h);
    int64_t out_w = sb_window_output_size(args->w, args->pad_left, args->pad_right, args->kw,
                                          args->dil_w, args->stride_w);
    if (out_h < 1 || out_w < 1) return SB_ERR_ARGUMENT;
    d->out_h = (size_t)out_h, d->out_w = (size_t)out_w;
    /* Every tensor's element count must be addressable in bytes. */
    size_t x_size, w_size, y_size, taps;
    if (!sb_mul3_ok(d->n, d->c, d->h, &x_size) || !sb_mul_ok(x_size, d->w, &x_size) ||
        !sb_mul_ok(x_size, sizeof(float), &x_size) || !sb_mul_ok(d->kh, d->kw, &taps) ||
        !sb_mul3_ok(d->cout, d->c / d->groups, taps, &w_size) ||
        !sb_mul_ok(w_size, sizeof(float), &w_size) ||
        !sb_mul3_ok(d->n, d->cout, d->out_h, &y_size) || !sb_mul_ok(y_size, d->out_w, &y_size) ||
        !sb_mul_ok(y_size, sizeof(float), &y_size))
        return SB_ERR_ARGUMENT;
    int packed = args->packed != 0;
    const float *weights = (const float *)(intptr_t)args->weights;
    d->weights = packed ? NULL : weights;
    d->packed = packed ? weights : NULL;
    d->bias = (const float *)(intptr_t)args->bias;
    d->activation = args->activation;
    d->affine = NULL, d->residual = NULL;   /* (a graph Conv sets its fused steps) */
    if (!sb_activation_valid(args->activation)) return SB_ERR_ARGUMENT;
    d->x = (const float *)(intptr_t)args->x;
    d->y = (float *)(intptr_t)args->y;
    return SB_OK;
}

int sb_conv_pointers_ok(const sb_conv_desc *d)
{
    size_t cin_g = d->c / d->groups;
    int empty_out = d->n == 0 || d->cout == 0;
    int empty_in = d->c == 0 || d->h == 0 || d->w == 0;
    if (!empty_out && !d->y) return 0;
    if (!empty_out && cin_g && !d->weights && !d->packed) return 0;
    if (!empty_out && !empty_in && !d->x) return 0;
    return 1;
}

int sb_conv_parse(const sb_conv2d_args *args, sb_conv_desc *d)
{
    int status = sb_conv_parse_call(args, d);
    if (status != SB_OK) return status;
    return sb_conv_pointers_ok(d) ? SB_OK : SB_ERR_ARGUMENT;
}

void sb_conv_describe_steps(const sb_conv_desc *d, size_t cout_g, size_t cols, size_t k,
                            size_t chunks, int threads, double est_ns, sb_plan_info *info)
{
    info->products = (int64_t)(d->n * d->groups);
    info->m = (int64_t)cout_g, info->n = (int64_t)cols, info->k = (int64_t)k;
    info->compute_chunks = (int64_t)chunks;
    info->threads = threads;
    info->waves = 1;
    info->estimated_ns = (int64_t)est_ns;
}
