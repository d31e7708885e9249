/* 2-D max pooling: placeholder until the kernel lands. */
#include "samebits.h"

int sb_max_pool2d_argv(const int64_t *args)
{
    (void)args;
    return SB_ERR_ARGUMENT;
}
