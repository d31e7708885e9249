/* 2-D convolution (NCHW) as blocked matrix products: placeholder entry. */
#include "samebits.h"
#include "sb_internal.h"
#include "conv_internal.h"

int sb_conv2d_argv(const int64_t *args)
{
    sb_conv_desc d;
    int status = sb_conv_parse(args, &d);
    if (status != SB_OK) return status;
    if (!sb_path_supported(d.path)) return SB_ERR_PATH;
    if (d.n == 0 || d.cout == 0) return SB_OK;
    if (sb_conv_is_depthwise(d.c / d.groups, d.groups)) {
        if (d.packed) d.weights = d.packed, d.packed = NULL;
        return sb_depthwise_run(&d);
    }
    return SB_ERR_ARGUMENT;
}

size_t sb_conv2d_packed_bytes(int path, size_t cout, size_t cin_per_group, size_t kh, size_t kw,
                              size_t groups)
{
    (void)path, (void)cout, (void)cin_per_group, (void)kh, (void)kw, (void)groups;
    return 0;
}

int sb_conv2d_pack(int path, size_t cout, size_t cin_per_group, size_t kh, size_t kw,
                   size_t groups, const float *w, void *packed, size_t packed_size)
{
    (void)path, (void)cout, (void)cin_per_group, (void)kh, (void)kw, (void)groups, (void)w,
        (void)packed, (void)packed_size;
    return SB_ERR_ARGUMENT;
}
