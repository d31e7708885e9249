/* How an ONNX operator type is written for the graph runtime.
 *
 * An operator is an sb_op_def: its name and up to three functions.
 *
 *  load   once per node, when the model is loaded: reads and checks the
 *         node's attributes through the sb_attr_* readers (an attribute
 *         that load never reads is refused afterwards, so that nothing a
 *         model asks for is silently ignored), looks at constant inputs
 *         (sb_load_const) and prepares what can be prepared (packed
 *         weights) into its state (sb_load_state). Attribute values live
 *         only while the model loads: copy what the state keeps.
 *  infer  for a concrete set of input infos, the outputs' element types and
 *         shapes, the scratch the run needs, and whether output 0 may be
 *         written over an input. An input's data is there when the value is
 *         known while planning (a constant, or computed from shapes alone);
 *         when infer needs data that is not there it returns
 *         SB_NEEDS_VALUES and runs again, with the data, when the run
 *         reaches the node (the plan after it is then made for the shapes
 *         it gives).
 *  prepare  (optional) once per step of a plan, after infer: makes the
 *         node's kernel call ready for those infos (arguments checked,
 *         geometry, the kernels' chunks) into P->prepared, at most
 *         SB_PREPARED_BYTES, and says how many bytes it wrote (0: nothing
 *         prepared). The plan keeps them for every run.
 *  run    computes the outputs (their buffers are allocated, their infos
 *         are infer's) from the inputs. It never allocates: scratch comes
 *         from infer's workspace. R->prepared is what prepare wrote, or
 *         null when the node runs outside a plan's steps (folded at load,
 *         computed while planning, inferred at run): run then makes the
 *         same call itself, so both give the same bits.
 *
 * Inputs are counted as the node gives them, trailing omitted ones dropped;
 * an omitted input in between is a null pointer. Errors name the node
 * through sb_load_fail / sb_infer_fail / sb_run_fail ("node 3 'conv1'
 * (Conv): ..."), with a status of samebits.h: SB_ERR_UNSUPPORTED for what
 * the runtime lacks (at load), SB_ERR_VALUE / SB_ERR_TYPE / SB_ERR_INDEX
 * for inputs that do not fit (at plan or run). */
#ifndef SB_GRAPH_OP_H
#define SB_GRAPH_OP_H

#include <stddef.h>
#include <stdint.h>
#include "samebits.h"
#include "graph/tensor.h"
#include "graph/onnx_model.h"

#define SB_NEEDS_VALUES 1        /* infer: an input's data is needed and not known yet */

typedef struct sb_graph sb_graph;

/* A node as the runtime keeps it (the session owns every field). */
typedef struct sb_node {
    int index;                   /* position in the file's graph */
    const char *name, *op_type;
    const struct sb_op_def *op;
    int n_in, n_out;             /* trailing omitted inputs not counted */
    int *in, *out;               /* value ids; -1 where omitted */
    void *state;                 /* the op's (load) */
    /* Set by the load-time rewrites (graph_fuse.c) before load: the
     * epilogue's activation in sb_matmul_args.activation's encoding, and a
     * bias that a MatMul absorbed (a value id, -1 for none); a Conv's
     * absorbed BatchNormalization, as a constant (Cout, 4) float32 value of
     * (mean, r, weight, bias) per channel (sb_epilogue_ops.row_affine; a
     * value id, -1 for none), and residual Add, as the index in `in` of the
     * Add's other operand (-1 for none). */
    int64_t activation;
    int fused_bias;
    int fused_affine, fused_residual;
    int label;                   /* its profile label (sb_session_profile_label) */
    unsigned char *consumed;     /* per input: load keeps what it needs of it */
    /* A node with subgraphs (If, Loop, Scan): its last n_implicit inputs are
     * the outer-scope values its subgraphs read (graph/subgraph.h), after
     * its n_in - n_implicit inputs as written (omitted trailing ones kept). */
    int n_implicit;
} sb_node;

typedef struct sb_load_ctx {
    sb_node *node;
    const sb_onnx_node *proto;   /* the node as read: its attributes */
    sb_graph *graph;
    int opset, mode, path, threads;
    unsigned char *used;         /* per attribute of proto: read by load */
    int status;                  /* the first error of an attribute reader */
    /* load may set it: the node then runs as this op (its infer, run and
     * flags), with the state load made (Dropout with its mask output is no
     * longer a view) */
    const struct sb_op_def *variant;
} sb_load_ctx;

typedef struct sb_infer_ctx {
    const sb_node *node;
    const void *state;
    int mode, path;
    int n_in, n_out;
    const sb_tval *const *in;    /* null where omitted; ->data null when not known yet */
    sb_vinfo *out;               /* to fill: n_out infos */
    int64_t workspace;           /* bytes of scratch the run needs */
    /* output 0 may overwrite this input (-1: none). Only when the run reads
     * each input element before it writes the output element at the same
     * index and never reads the input again: LogSoftmax, which reads its
     * input after writing e^(x - m) out, gave wrong results on every
     * intermediate it was offered (tests/differential/ checks every
     * operator on intermediates with one reader). */
    int inplace;
    /* every output is a run of input 0's bytes, output j right after output
     * j - 1 (a Split along an axis with only 1s before it): the plan makes
     * them views and the step does not run */
    int outputs_view_input;
    /* every input is a run of output 0's bytes, input i right after the
     * inputs before it (a Concat along an axis with only 1s before it): the
     * plan may have an input's producer write it there, and the run then
     * copies nothing for that input (it finds it in place) */
    int inputs_in_output;
} sb_infer_ctx;

typedef struct sb_run_ctx {
    const sb_node *node;
    const void *state;
    int mode, path, threads;
    int n_in, n_out;
    const sb_tval *const *in;    /* null where omitted */
    sb_tval *const *out;         /* null where the node leaves an output out */
    void *workspace;             /* infer's bytes, 64-byte aligned */
    const void *prepared;        /* prepare's bytes, or null (see the top) */
} sb_run_ctx;

/* An op whose outputs exist only once it has run (If, Loop, Scan run a
 * subgraph): its infer returns SB_NEEDS_VALUES, so the node ends every plan,
 * and when a run reaches it, eval computes the outputs instead of infer and
 * run. eval sets each output's info and data; the data is a buffer of
 * sb_alloc_aligned handed to keep (the run frees it), or a buffer from alloc. */
typedef struct sb_eval_ctx {
    const sb_node *node;
    const void *state;
    int mode, path, threads;
    int n_in, n_out;
    const sb_tval *const *in;    /* null where omitted */
    sb_tval *out;                /* n_out: to fill (left zero where the node omits one) */
    int (*keep)(void *run, void *buffer);   /* SB_OK, or SB_ERR_NO_MEMORY (buffer freed) */
    void *run;
} sb_eval_ctx;

/* The most a prepare may write. The plan keeps a copy of just the bytes
 * written, so prepared bytes must not point into themselves where run reads
 * (run makes its own copy of what it must point at its operands). */
#define SB_PREPARED_BYTES 4096

typedef struct sb_prepare_ctx {
    const sb_node *node;
    const void *state;
    int mode, path;
    int n_in, n_out;
    const sb_tval *const *in;    /* as infer saw them */
    const sb_vinfo *out;         /* infer's output infos */
    void *prepared;              /* SB_PREPARED_BYTES, zeroed, 64-byte aligned */
    size_t bytes;                /* to set: the bytes written */
} sb_prepare_ctx;

enum sb_op_flags {
    SB_OP_SHAPE_ONLY = 1,        /* run reads only its inputs' infos (Shape, Size) */
    SB_OP_VIEW = 2,              /* output 0 is input 0's bytes under infer's shape: no run */
    SB_OP_NO_FOLD = 4,           /* never computed at load */
    SB_OP_OPTIONAL_FIRST = 8,    /* output 0 may be left out (""): run checks each output */
};
/* (an op with eval is never folded at load: its infer always asks for a run) */

/* An integer attribute and its default, read by the loader itself for an op
 * whose attributes are all such (no load of its own). */
typedef struct { const char *name; int64_t fallback; } sb_int_attr;
#define SB_MAX_INT_ATTRS 4

typedef struct sb_op_def {
    const char *name;
    int (*load)(sb_load_ctx *L);     /* null: no attributes, or int_attrs */
    int (*infer)(sb_infer_ctx *I);
    int (*run)(sb_run_ctx *R);       /* null only for SB_OP_VIEW */
    unsigned flags;
    int (*prepare)(sb_prepare_ctx *P);   /* null: nothing to prepare */
    /* with no load: the integer attributes, read in this order into a state
     * of int64_t values (a struct of int64_t fields in the same order) */
    sb_int_attr int_attrs[SB_MAX_INT_ATTRS];
    int (*eval)(sb_eval_ctx *E);     /* null but for ops that run subgraphs (above) */
} sb_op_def;

/* The registry (graph/ops/registry.c, one row per type in graph/ops/op_list.h):
 * the op of a default-domain type, or null. */
const sb_op_def *sb_op_find(const char *op_type);
/* Every registered name, in one sorted list (count through *count). */
const char *const *sb_op_names(size_t *count);

/* ---- load ---------------------------------------------------------------- */

int sb_load_fail(sb_load_ctx *L, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int sb_has_attr(sb_load_ctx *L, const char *name);
/* The typed readers: the default when the attribute is absent; a wrong type
 * sets L->status (SB_ERR_UNSUPPORTED) and returns the default. The _req
 * forms refuse an absent attribute. */
int64_t sb_attr_int(sb_load_ctx *L, const char *name, int64_t dflt);
int64_t sb_attr_int_req(sb_load_ctx *L, const char *name);
float sb_attr_float(sb_load_ctx *L, const char *name, float dflt);
/* A string attribute as a NUL-terminated string owned by the session. */
const char *sb_attr_str(sb_load_ctx *L, const char *name, const char *dflt);
/* ints / floats: 1 and the values (valid while loading) when present, else 0. */
int sb_attr_ints(sb_load_ctx *L, const char *name, const int64_t **v, size_t *n);
int sb_attr_floats(sb_load_ctx *L, const char *name, const float **v, size_t *n);
/* strings (valid while loading): 1 when present. */
int sb_attr_strings(sb_load_ctx *L, const char *name, const sb_bytes **v, size_t *n);
/* A tensor attribute converted as an initializer is (into a constant the
 * session owns); 1 when present. */
int sb_attr_tensor(sb_load_ctx *L, const char *name, sb_tval *out);
/* A graph attribute (a subgraph, valid while loading); null and an error
 * when absent or not a graph. */
const sb_onnx_graph *sb_attr_graph(sb_load_ctx *L, const char *name);
/* Marks an attribute read without reading it (documented as not changing
 * an inference result). */
void sb_attr_ignore(sb_load_ctx *L, const char *name);

int sb_load_has_input(const sb_load_ctx *L, int i);
/* Input i's value when it is a constant (an initializer or folded), else null. */
const sb_tval *sb_load_const(const sb_load_ctx *L, int i);
/* A constant by value id (a fused bias), else null. */
const sb_tval *sb_load_const_value(const sb_load_ctx *L, int value);
/* load keeps what it needs of constant input i (packed weights): the run
 * gets null there, and the constant is freed once no node reads it. */
void sb_load_consume(sb_load_ctx *L, int i);
/* Zeroed state of `bytes` (owned by the session), set as the node's state. */
void *sb_load_state(sb_load_ctx *L, size_t bytes);
/* A 64-byte aligned buffer owned by the session (packed weights). */
void *sb_load_buffer(sb_load_ctx *L, size_t bytes);
/* Refuses outputs beyond the first (`what` names them). */
int sb_load_only_first_output(sb_load_ctx *L, const char *what);

/* ---- infer and run ------------------------------------------------------- */

int sb_infer_fail(sb_infer_ctx *I, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int sb_run_fail(sb_run_ctx *R, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int sb_eval_fail(sb_eval_ctx *E, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* "node 3 'conv1' (Conv)" */
void sb_node_where(const sb_node *node, char *buf, size_t size);

/* After infer: every output the node names must be one the operator gave a
 * type (a node may list more outputs than its operator has); an error
 * naming the first that is not. */
int sb_check_inferred_outputs(const sb_node *node, const sb_vinfo *infos);

/* An input that must be there: null and an error naming it otherwise. */
const sb_tval *sb_infer_input(sb_infer_ctx *I, int i, const char *what);
/* An infer context over a run's node and inputs (outs: n_out infos), for a
 * run that repeats infer's checks or geometry on the values it now has. */
void sb_infer_from_run(const sb_run_ctx *R, sb_infer_ctx *I, sb_vinfo *outs);
/* The same input must be float32 (or an integer type): an error otherwise. */
const sb_tval *sb_infer_float(sb_infer_ctx *I, int i, const char *what);
const sb_tval *sb_infer_int(sb_infer_ctx *I, int i, const char *what);
/* An integer input's values as int64 (at most `cap`; *n set), from a known
 * 0-d or 1-d tensor. SB_NEEDS_VALUES when it is not known yet. */
int sb_infer_int_list(sb_infer_ctx *I, int i, const char *what, int64_t *v, size_t cap, size_t *n);
/* ONNX's axis in [-rank, rank) as [0, rank); an SB_ERR_VALUE otherwise. */
int sb_infer_axis(sb_infer_ctx *I, int64_t axis, int rank, const char *what, int *out);

#endif
