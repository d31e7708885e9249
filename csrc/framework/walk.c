/* Strided walks made short (walk.h). */
#include "framework/walk.h"

int sb_merge_walk(int rank, int64_t *shape, int count, int64_t *const *strides)
{
    int out = 0;
    for (int d = 0; d < rank; ++d) {
        if (shape[d] == 1) continue;
        if (out > 0) {
            int merge = 1;
            for (int o = 0; o < count && merge; ++o)
                merge = strides[o][out - 1] == strides[o][d] * shape[d];
            if (merge) {
                shape[out - 1] *= shape[d];
                for (int o = 0; o < count; ++o) strides[o][out - 1] = strides[o][d];
                continue;
            }
        }
        shape[out] = shape[d];
        for (int o = 0; o < count; ++o) strides[o][out] = strides[o][d];
        ++out;
    }
    if (out == 0) {
        shape[0] = 1;
        for (int o = 0; o < count; ++o) strides[o][0] = 0;
        out = 1;
    }
    return out;
}
