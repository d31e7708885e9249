/* The outer-scope names a node's subgraphs read (ONNX: a subgraph may use
 * any value of the graphs around it). The loader adds them to the node as
 * implicit inputs (sb_node.n_implicit), so that run order, value lifetimes
 * and readers treat them as the node's inputs; each subgraph then gets them
 * as graph inputs after its declared ones (graph/subgraph.h). */
#ifndef SB_GRAPH_SCOPE_H
#define SB_GRAPH_SCOPE_H

#include "graph/onnx_model.h"

/* Whether node p has graph attributes. */
int sb_scope_has_subgraphs(const sb_onnx_node *p);
/* The names p's subgraphs (and theirs, nested) read but do not define, in
 * order of first use, once each: *names (malloc'ed; the strings are the
 * model's) and *count. SB_OK, or an error with the message set. */
int sb_scope_free_names(const sb_onnx_node *p, const char ***names, int *count);

#endif
