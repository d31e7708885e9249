/* float16 and bfloat16 in a model (docs/onnx.md, "float16 and bfloat16"):
 * such a value is a float32 holding a value of its type. The loader marks
 * the values ONNX types as float16 / bfloat16 (graph inputs and initializers
 * of those types, Cast to them, and every node output computed from one) and
 * puts a rounding node after each node that computes one in float32, so
 * that every result is rounded to its type once; value-moving operators
 * (Reshape, Concat, Max, ...) need none. */
#ifndef SB_GRAPH_NARROW_H
#define SB_GRAPH_NARROW_H

#include "graph/graph.h"

extern const sb_op_def sb_op_round_float16, sb_op_round_bfloat16;

/* seed: per value, its narrow type from the graph's inputs and initializers
 * (SB_DT_FLOAT16, SB_DT_BFLOAT16 or 0). Marks node outputs, and appends the
 * rounding nodes to *nodes and *protos (reallocated; *count grows). The
 * marks of every value after that: *narrow (malloc'ed, g->n_values). */
int sb_narrow_insert(sb_graph *g, const unsigned char *seed, sb_node **nodes,
                     const sb_onnx_node ***protos, int *count, unsigned char **narrow);

#endif
