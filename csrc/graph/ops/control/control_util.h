/* Helpers of the control-flow operators (If, Loop, Scan): each runs a
 * subgraph (graph/subgraph.h) from its eval, so its infer only asks for a
 * run (op.h, sb_eval_ctx). */
#ifndef SB_GRAPH_OPS_CONTROL_UTIL_H
#define SB_GRAPH_OPS_CONTROL_UTIL_H

#include <string.h>
#include "graph/op.h"
#include "graph/subgraph.h"
#include "framework/memory.h"

/* The outputs exist once the node has run: every plan ends at it. */
static inline int control_infer(sb_infer_ctx *I)
{
    (void)I;
    return SB_NEEDS_VALUES;
}

/* A one-element tensor's truth (any type; a float's != 0); -1 with an error
 * when it has not exactly one element. */
static inline int control_truth(sb_eval_ctx *E, const sb_tval *t, const char *what)
{
    if (sb_vinfo_numel(&t->info) != 1)
        return sb_eval_fail(E, SB_ERR_VALUE, "%s must have one element, it has %lld", what,
                            (long long)sb_vinfo_numel(&t->info)), -1;
    if (t->info.dtype == SB_DT_FLOAT) return ((const float *)t->data)[0] != 0.0f;
    if (!sb_dtype_is_int(t->info.dtype))
        return sb_eval_fail(E, SB_ERR_TYPE, "%s is %s; bool is expected", what,
                            sb_dtype_name(t->info.dtype)), -1;
    return sb_int_at(t, 0) != 0;
}

/* Output j of the node set to t, its buffer kept by the run (freed when
 * the node leaves the output out). */
static inline int control_give(sb_eval_ctx *E, int j, sb_tval *t)
{
    if (E->node->out[j] < 0) {
        sb_free_aligned(t->data);
        t->data = NULL;
        return SB_OK;
    }
    E->out[j] = *t;
    t->data = NULL;
    if (E->keep(E->run, E->out[j].data)) return sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory");
    return SB_OK;
}

/* A new buffer holding a copy of t (its info in *copy); SB_OK or no memory. */
static inline int control_copy(sb_eval_ctx *E, const sb_tval *t, sb_tval *copy)
{
    int64_t bytes = sb_vinfo_bytes(&t->info);
    copy->info = t->info;
    copy->data = sb_alloc_aligned((size_t)(bytes > 0 ? bytes : 1));
    if (!copy->data) return sb_eval_fail(E, SB_ERR_NO_MEMORY, "out of memory for %lld bytes",
                                         (long long)bytes);
    if (bytes > 0) memcpy(copy->data, t->data, (size_t)bytes);
    return SB_OK;
}

/* Frees the buffers of n tensors (null data skipped). */
static inline void control_release(sb_tval *t, int n)
{
    for (int i = 0; i < n; ++i) {
        sb_free_aligned(t[i].data);
        t[i].data = NULL;
    }
}

#endif
