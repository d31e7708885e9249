/* The graph runtime's tensors: an element type (ONNX's TensorProto.DataType
 * numbers), a shape, and where the elements are. Shapes are C-ordered and
 * dense; every size is checked against overflow where it is made. */
#ifndef SB_GRAPH_TENSOR_H
#define SB_GRAPH_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#define SB_MAX_RANK 16           /* the highest tensor rank a graph may use */
#define SB_MAX_ELEMENTS ((int64_t)1 << 40)

/* TensorProto.DataType: the element types a graph computes with. float16,
 * bfloat16 and float64 appear only as stored constants, converted to
 * float32 when the model is loaded. */
enum sb_dtype {
    SB_DT_UNDEFINED = 0, SB_DT_FLOAT = 1, SB_DT_UINT8 = 2, SB_DT_INT8 = 3, SB_DT_UINT16 = 4,
    SB_DT_INT16 = 5, SB_DT_INT32 = 6, SB_DT_INT64 = 7, SB_DT_STRING = 8, SB_DT_BOOL = 9,
    SB_DT_FLOAT16 = 10, SB_DT_DOUBLE = 11, SB_DT_UINT32 = 12, SB_DT_UINT64 = 13,
    SB_DT_COMPLEX64 = 14, SB_DT_COMPLEX128 = 15, SB_DT_BFLOAT16 = 16,
};

typedef struct sb_vinfo {
    int dtype;
    int rank;
    int64_t dims[SB_MAX_RANK];
} sb_vinfo;

/* A tensor as a kernel sees it: its info and its elements (C order). */
typedef struct sb_tval {
    sb_vinfo info;
    void *data;
} sb_tval;

/* Bytes per element of a run-time type; 0 for a type graphs cannot compute with. */
int sb_dtype_size(int dtype);
/* "float32", "int64", ... (ONNX's names for the others, "unknown" beyond). */
const char *sb_dtype_name(int dtype);
int sb_dtype_is_int(int dtype);       /* every integer type and bool */
int sb_dtype_is_signed(int dtype);

/* The element count of a shape; -1 when it is above SB_MAX_ELEMENTS. */
int64_t sb_vinfo_numel(const sb_vinfo *v);
/* Bytes of the tensor; -1 on overflow or an unknown type. */
int64_t sb_vinfo_bytes(const sb_vinfo *v);
int sb_vinfo_same_shape(const sb_vinfo *a, const sb_vinfo *b);
/* "(2, 3, 4)" into buf (always terminated). */
void sb_shape_text(const sb_vinfo *v, char *buf, size_t size);

/* An element of an integer (or bool) tensor as int64 (uint64 bits above
 * 2^63 wrap to negative: read them with sb_int_at_u). */
int64_t sb_int_at(const sb_tval *t, int64_t i);
uint64_t sb_int_at_u(const sb_tval *t, int64_t i);
/* Stores v (wrapped to the type, as a C conversion does; bool: v != 0). */
void sb_int_store(void *data, int dtype, int64_t i, int64_t v);

/* C-order strides (in elements) of a shape. */
void sb_c_strides(const sb_vinfo *v, int64_t *strides);

#endif
