/* The parts of an ONNX ModelProto the runtime reads (onnx.proto's field
 * numbers), parsed by onnx_reader.c. Everything lives in one bump arena
 * owned by the sb_onnx_model; strings are NUL-terminated copies, tensor
 * payloads point into the caller's bytes (valid while they are). */
#ifndef SB_GRAPH_ONNX_MODEL_H
#define SB_GRAPH_ONNX_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* AttributeProto.AttributeType */
enum {
    SB_A_UNDEFINED = 0, SB_A_FLOAT = 1, SB_A_INT = 2, SB_A_STRING = 3, SB_A_TENSOR = 4,
    SB_A_GRAPH = 5, SB_A_FLOATS = 6, SB_A_INTS = 7, SB_A_STRINGS = 8, SB_A_TENSORS = 9,
    SB_A_GRAPHS = 10, SB_A_SPARSE_TENSOR = 11, SB_A_SPARSE_TENSORS = 12, SB_A_TYPE_PROTO = 13,
    SB_A_TYPE_PROTOS = 14,
};

#define SB_ONNX_MAX_DEPTH 32     /* graphs nested in attributes, at most */

typedef struct sb_bytes {
    const uint8_t *data;
    size_t size;
} sb_bytes;

/* A repeated numeric field, gathered over all its occurrences. */
typedef struct sb_i64s { int64_t *v; size_t n; } sb_i64s;
typedef struct sb_f32s { float *v; size_t n; } sb_f32s;
typedef struct sb_f64s { double *v; size_t n; } sb_f64s;

typedef struct sb_onnx_tensor {
    const char *name;
    sb_i64s dims;
    int64_t data_type;
    int has_raw;
    sb_bytes raw_data;
    sb_f32s float_data;
    sb_i64s int32_data;          /* int32_data values, sign-extended */
    sb_i64s int64_data;
    sb_i64s uint64_data;         /* uint64 bits */
    sb_f64s double_data;
    size_t string_count;
    size_t external_count;
    const char **external_keys, **external_values;
    int64_t data_location;       /* 1: EXTERNAL */
    int has_segment;
} sb_onnx_tensor;

typedef struct sb_onnx_value_info {
    const char *name;
    int64_t elem_type;           /* 0: not given */
    const char *kind;            /* "tensor", or "sequence", "map", "sparse tensor", "optional", "opaque" */
    int has_shape;
    int rank;
    int64_t *dims;               /* -1: unknown or symbolic */
    const char **dim_params;     /* a symbolic dimension's name, else null */
} sb_onnx_value_info;

typedef struct sb_onnx_graph sb_onnx_graph;

typedef struct sb_onnx_attr {
    const char *name;
    int type;                    /* declared, or inferred for IR version 1 files */
    float f;
    int64_t i;
    sb_bytes s;
    sb_onnx_tensor *t;
    sb_onnx_graph *g;
    sb_f32s floats;
    sb_i64s ints;
    size_t strings_count;
    sb_bytes *strings;
    size_t tensors_count;
    sb_onnx_tensor **tensors;
    size_t graphs_count;
    sb_onnx_graph **graphs;
    const char *ref_attr_name;   /* a reference to an enclosing function's attribute */
} sb_onnx_attr;

typedef struct sb_onnx_node {
    const char *op_type, *domain, *name;
    size_t input_count, output_count, attr_count;
    const char **inputs, **outputs;  /* "" for an omitted optional one */
    sb_onnx_attr *attrs;
} sb_onnx_node;

struct sb_onnx_graph {
    const char *name;
    size_t node_count, initializer_count, input_count, output_count, value_info_count;
    sb_onnx_node *nodes;
    sb_onnx_tensor *initializers;
    sb_onnx_value_info *inputs, *outputs, *value_info;
    size_t sparse_initializer_count;
};

typedef struct sb_onnx_opset { const char *domain; int64_t version; } sb_onnx_opset;

typedef struct sb_onnx_model {
    int64_t ir_version;
    const char *producer_name, *producer_version;
    size_t opset_count, function_count;
    sb_onnx_opset *opsets;
    const char **functions;      /* names of model-local functions */
    sb_onnx_graph *graph;
    struct sb_arena_block *arena;
} sb_onnx_model;

/* Parses the bytes of an .onnx file. Returns SB_OK, or SB_ERR_DECODE /
 * SB_ERR_NO_MEMORY with the message set (graph/error.h). */
int sb_onnx_parse(const uint8_t *data, size_t size, sb_onnx_model **out);
void sb_onnx_free(sb_onnx_model *model);

/* The opset the model imports for a domain ("" and "ai.onnx" are one), or -1. */
int64_t sb_onnx_opset_of(const sb_onnx_model *model, const char *domain);
const sb_onnx_attr *sb_onnx_find_attr(const sb_onnx_node *node, const char *name);

#endif
