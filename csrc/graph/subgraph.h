/* A node's subgraph (an If branch, a Loop or Scan body) as the ops that run
 * them see it: loaded once with the node, as a session of its own (its
 * plans cached per input shapes like the model's), and run with the values
 * the op gives its declared inputs and the node's implicit inputs (the
 * outer-scope values, graph/scope.h) after them. */
#ifndef SB_GRAPH_SUBGRAPH_H
#define SB_GRAPH_SUBGRAPH_H

#include "graph/op.h"

typedef struct sb_subgraph sb_subgraph;

/* Loads graph attribute `attr` of the node being loaded (freed with the
 * model). Its declared inputs must number n_inputs (-1: any). */
int sb_subgraph_load(sb_load_ctx *L, const char *attr, int n_inputs, sb_subgraph **out);
int sb_subgraph_inputs(const sb_subgraph *s);    /* declared inputs */
int sb_subgraph_outputs(const sb_subgraph *s);
/* Output j's declared element type (0: not declared), rank (-1: not
 * declared) and dimensions (-1: unknown). */
void sb_subgraph_output_decl(const sb_subgraph *s, int j, int *dtype, int *rank, int64_t *dims);

/* One run: `in` gives the declared inputs (sb_subgraph_inputs of them),
 * E's node its implicit inputs. out (sb_subgraph_outputs of them): each a
 * new sb_alloc_aligned buffer the caller owns. Errors name the node and
 * the subgraph's own node. */
int sb_subgraph_run(sb_subgraph *s, const sb_eval_ctx *E, const sb_tval *const *in, sb_tval *out);

#endif
