/* One node evaluated: its op's infer, prepare and run, as loading (constant
 * folding), planning (values computed while planning, and the steps) and
 * runs (the steps, and a node whose output shapes need its inputs' data) all
 * call them. The ops' contexts (op.h) are filled here alone. */
#ifndef SB_GRAPH_NODE_EVAL_H
#define SB_GRAPH_NODE_EVAL_H

#include "graph/graph.h"

/* What infer said besides the output infos. */
typedef struct sb_node_needs {
    int64_t workspace;           /* bytes of scratch the run needs */
    int inplace;                 /* the input output 0 may overwrite, or -1 */
    int outputs_view_input;      /* sb_infer_ctx.outputs_view_input */
    int inputs_in_output;        /* sb_infer_ctx.inputs_in_output */
} sb_node_needs;

/* The node's output infos (n->n_out, zeroed first) for these inputs (null
 * where omitted or consumed; data null where not known yet). SB_NEEDS_VALUES
 * when infer needs data that is not there; otherwise the infos are checked
 * (sb_check_inferred_outputs) and a samebits.h status returned. */
int sb_node_infer(const sb_graph *g, const sb_node *n, const sb_tval *const *in, sb_vinfo *out,
                  sb_node_needs *needs);

/* The node's prepare (when its op has one) for the infos infer gave: its
 * bytes in *prepared (aligned, for sb_free_aligned), or null when it
 * prepared nothing. */
int sb_node_prepare(const sb_graph *g, const sb_node *n, const sb_tval *const *in,
                    const sb_vinfo *out, void **prepared);

/* The node's run at this thread cap (a view: input 0's bytes copied into
 * output 0 when `copy_view`, else nothing), with its prepared bytes or null. */
int sb_node_run(const sb_graph *g, const sb_node *n, int threads, const void *prepared,
                const sb_tval *const *in, sb_tval *const *out, void *workspace, int copy_view);

/* The node's eval (an op that runs subgraphs, op.h): its outputs' infos and
 * data in out (n->n_out, zeroed first), each buffer handed to keep(run). */
int sb_node_eval(const sb_graph *g, const sb_node *n, int threads, const sb_tval *const *in,
                 sb_tval *out, int (*keep)(void *run, void *buffer), void *run);

#endif
