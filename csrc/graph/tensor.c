/* Element types and shapes of the graph runtime (tensor.h). */
#include <stdio.h>
#include <string.h>
#include "graph/tensor.h"
#include "graph/py_text.h"

int sb_dtype_size(int dtype)
{
    static const int sizes[] = {
#define SIZE_OF(code, name, size) size,
        SB_DTYPE_TABLE(SIZE_OF)
#undef SIZE_OF
    };
    return dtype >= 0 && dtype < (int)(sizeof sizes / sizeof sizes[0]) ? sizes[dtype] : 0;
}

const char *sb_dtype_name(int dtype)
{
    static const char *const names[] = {
#define NAME_OF(code, name, size) name,
        SB_DTYPE_TABLE(NAME_OF)
#undef NAME_OF
    };
    if (dtype >= 0 && dtype < (int)(sizeof names / sizeof names[0])) return names[dtype];
    return "unknown";
}

int sb_dtype_is_int(int dtype) { return dtype != SB_DT_FLOAT && sb_dtype_size(dtype) > 0; }

int sb_dtype_is_signed(int dtype)
{
    return dtype == SB_DT_INT8 || dtype == SB_DT_INT16 || dtype == SB_DT_INT32 ||
           dtype == SB_DT_INT64;
}

int64_t sb_vinfo_numel(const sb_vinfo *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->rank; ++d) {
        int64_t s = v->dims[d];
        if (s < 0) return -1;
        if (s == 0) n = 0;
    }
    if (n == 0) return 0;
    for (int d = 0; d < v->rank; ++d) {
        if (v->dims[d] > SB_MAX_ELEMENTS / n) return -1;
        n *= v->dims[d];
    }
    return n;
}

int64_t sb_vinfo_bytes(const sb_vinfo *v)
{
    int64_t n = sb_vinfo_numel(v);
    int size = sb_dtype_size(v->dtype);
    return n < 0 || size == 0 ? -1 : n * size;
}

int sb_vinfo_same_shape(const sb_vinfo *a, const sb_vinfo *b)
{
    if (a->rank != b->rank) return 0;
    for (int d = 0; d < a->rank; ++d)
        if (a->dims[d] != b->dims[d]) return 0;
    return 1;
}

void sb_shape_text(const sb_vinfo *v, char *buf, size_t size)
{
    if (size == 0) return;
    sb_py_tuple_text(v->dims, v->rank, buf, size);
}

int64_t sb_int_at(const sb_tval *t, int64_t i)
{
    const void *p = t->data;
    switch (t->info.dtype) {
    case SB_DT_INT64: return ((const int64_t *)p)[i];
    case SB_DT_UINT64: return (int64_t)((const uint64_t *)p)[i];
    case SB_DT_INT32: return ((const int32_t *)p)[i];
    case SB_DT_UINT32: return ((const uint32_t *)p)[i];
    case SB_DT_INT16: return ((const int16_t *)p)[i];
    case SB_DT_UINT16: return ((const uint16_t *)p)[i];
    case SB_DT_INT8: return ((const int8_t *)p)[i];
    case SB_DT_UINT8: case SB_DT_BOOL: return ((const uint8_t *)p)[i];
    default: return 0;
    }
}

uint64_t sb_int_at_u(const sb_tval *t, int64_t i) { return (uint64_t)sb_int_at(t, i); }

void sb_int_store(void *data, int dtype, int64_t i, int64_t v)
{
    switch (dtype) {
    case SB_DT_INT64: ((int64_t *)data)[i] = v; break;
    case SB_DT_UINT64: ((uint64_t *)data)[i] = (uint64_t)v; break;
    case SB_DT_INT32: ((int32_t *)data)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case SB_DT_UINT32: ((uint32_t *)data)[i] = (uint32_t)(uint64_t)v; break;
    case SB_DT_INT16: ((int16_t *)data)[i] = (int16_t)(uint16_t)(uint64_t)v; break;
    case SB_DT_UINT16: ((uint16_t *)data)[i] = (uint16_t)(uint64_t)v; break;
    case SB_DT_INT8: ((int8_t *)data)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case SB_DT_UINT8: ((uint8_t *)data)[i] = (uint8_t)(uint64_t)v; break;
    case SB_DT_BOOL: ((uint8_t *)data)[i] = v != 0; break;
    default: break;
    }
}

void sb_c_strides(const sb_vinfo *v, int64_t *strides)
{
    int64_t step = 1;
    for (int d = v->rank - 1; d >= 0; --d) {
        strides[d] = step;
        step *= v->dims[d] > 0 ? v->dims[d] : 1;
    }
}
