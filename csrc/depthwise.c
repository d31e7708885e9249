/* Depthwise convolution: placeholder until the direct kernel lands. */
#include "samebits.h"
#include "conv_internal.h"

int sb_depthwise_run(const sb_conv_desc *d)
{
    (void)d;
    return SB_ERR_ARGUMENT;
}
