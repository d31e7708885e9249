/* A loaded model (graph_load.c): its values and its nodes in run order, the
 * constants converted, the rewrites applied and every node's op prepared.
 * Read-only once loaded: runs share it. */
#ifndef SB_GRAPH_GRAPH_H
#define SB_GRAPH_GRAPH_H

#include "graph/arena.h"
#include "graph/op.h"

enum sb_value_kind {
    SB_V_COMPUTED = 0,           /* written by a node */
    SB_V_INPUT = 1,              /* a graph input */
    SB_V_CONST = 2,              /* an initializer, a folded node's output */
};

typedef struct sb_value {
    const char *name;
    int kind;
    sb_tval konst;               /* a constant's info and elements (owned) */
    int readers;                 /* node inputs that read it at run */
    int is_output;               /* a graph output */
} sb_value;

/* A graph input or output as the model declares it. */
typedef struct sb_io {
    int value;
    const char *name;
    int dtype;                   /* 0: not declared */
    int rank;                    /* -1: not declared */
    int64_t dims[SB_MAX_RANK];   /* -1: unknown or symbolic */
    const char *dim_names[SB_MAX_RANK];
} sb_io;

struct sb_graph {
    sb_arena_block *arena;       /* names, nodes, states */
    int mode, path, threads, opset;
    int declared_opset;                  /* the model's; opset is at least 7 (early_opsets.h) */
    int n_values, n_nodes, n_inputs, n_outputs, n_labels;
    sb_value *values;
    sb_node *nodes;              /* in run order */
    sb_io *inputs, *outputs;
    const char **labels;         /* profile labels ("Conv+relu") */
    void **buffers;              /* aligned buffers freed with the graph */
    size_t n_buffers, cap_buffers;
    /* the name -> value id table */
    int *slots;
    size_t n_slots;
    /* while loading only: the file's model and the load's options (a
     * node's subgraphs load from them, graph/subgraph.c) */
    const struct sb_onnx_model *model;
    const struct sb_graph_options *options;
    /* per value: SB_DT_FLOAT16 / SB_DT_BFLOAT16 where ONNX types it so
     * (graph/narrow.h), else 0 */
    unsigned char *narrow;
    /* objects freed with the graph (the subgraphs' sessions) */
    void **owned;
    void (**owned_free)(void *);
    size_t n_owned, cap_owned;
};

typedef struct sb_graph_options {
    int mode, path, threads;
    const char *base_dir;        /* external data files, or null */
    size_t external_count;
    const sb_external_data *external;
    const struct sb_model_file *file;   /* the file the bytes are, when the runtime read it */
} sb_graph_options;

int sb_graph_load(const uint8_t *data, size_t size, const sb_graph_options *options,
                  sb_graph **out);
void sb_graph_free(sb_graph *g);

/* Internal to the loader's files. graph_values.c: the value named `name`
 * (its id; a new one when create, else -1; -2 when out of memory), and a
 * buffer the graph frees with itself (0, or SB_ERR_NO_MEMORY). */
int sb_graph_value(sb_graph *g, const char *name, int create);
/* A new value for a constant the loader makes (a fused node's steps or
 * weights): named `base`, or `base#k` with the first k no value has, since
 * the nodes its name comes from may share a name (ONNX does not make node
 * names unique, and exporters leave them empty). Its id, or -2. */
int sb_graph_new_value(sb_graph *g, const char *base);
int sb_graph_keep_buffer(sb_graph *g, void *buffer);
/* An object freed (by free_fn) with the graph: SB_OK, or SB_ERR_NO_MEMORY
 * (the object freed now). */
int sb_graph_keep_object(sb_graph *g, void *object, void (*free_fn)(void *));
/* A subgraph (an If branch, a Loop or Scan body) loaded as a graph of its
 * own, in the parent's opset, mode and path: its declared inputs, then the
 * `implicit` outer-scope names it reads: graph inputs of any type and
 * shape, or constants where the parent's value is one (its bytes shared). */
int sb_graph_load_subgraph(const sb_graph *parent, const sb_onnx_graph *pg,
                           const char *const *implicit, int n_implicit, sb_graph **out);
/* A TensorProto as a run-time constant (float16, bfloat16 and float64 as
 * float32, rounded to nearest once); `what` names it in errors. */
int sb_tensor_from_proto(sb_graph *g, const sb_onnx_tensor *t, const sb_graph_options *options,
                         const char *what, sb_tval *out);
/* The load-time rewrites (graph_fuse.c) over the nodes before their ops
 * load; a rewrite may move a node later in the run order, with its proto. */
int sb_graph_fuse(sb_graph *g, const sb_onnx_node **protos);

#endif
