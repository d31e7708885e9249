/* The ONNX operator types the runtime loads, looked up by name: those of
 * graph/ops/op_list.h, one sb_op_def each, and the families not yet split
 * into files of their own (one table each, ops_<family>.c). The ONNX
 * semantics of each op live in its own file; this file only registers them. */
#include <stdlib.h>
#include <string.h>
#include "graph/op.h"

#define SB_OP(name) extern const sb_op_def sb_op_##name;
#include "graph/ops/op_list.h"
#undef SB_OP

static const sb_op_def *const listed[] = {
#define SB_OP(name) &sb_op_##name,
#include "graph/ops/op_list.h"
#undef SB_OP
};
#define LISTED (sizeof listed / sizeof listed[0])

extern const sb_op_def sb_ops_math[], sb_ops_nn[], sb_ops_index[],
    sb_ops_reduce[], sb_ops_rnn[];

static const sb_op_def *const families[] = {
    sb_ops_math, sb_ops_nn, sb_ops_index, sb_ops_reduce, sb_ops_rnn,
};

const sb_op_def *sb_op_find(const char *op_type)
{
    for (size_t k = 0; k < LISTED; ++k)
        if (strcmp(listed[k]->name, op_type) == 0) return listed[k];
    for (size_t f = 0; f < sizeof families / sizeof families[0]; ++f)
        for (const sb_op_def *op = families[f]; op->name; ++op)
            if (strcmp(op->name, op_type) == 0) return op;
    return NULL;
}

#define MAX_OPS 512
static const char *sorted[MAX_OPS];
static size_t sorted_count;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *const *sb_op_names(size_t *count)
{
    if (!sorted_count) {   /* the same list whichever thread builds it first */
        const char *names[MAX_OPS];
        size_t n = 0;
        for (size_t k = 0; k < LISTED; ++k) names[n++] = listed[k]->name;
        for (size_t f = 0; f < sizeof families / sizeof families[0]; ++f)
            for (const sb_op_def *op = families[f]; op->name && n < MAX_OPS; ++op) names[n++] = op->name;
        qsort(names, n, sizeof names[0], by_name);
        memcpy(sorted, names, n * sizeof names[0]);
        sorted_count = n;
    }
    *count = sorted_count;
    return sorted;
}

int sb_onnx_operator_count(void)
{
    size_t n;
    sb_op_names(&n);
    return (int)n;
}

const char *sb_onnx_operator_name(int index)
{
    size_t n;
    const char *const *names = sb_op_names(&n);
    return index >= 0 && (size_t)index < n ? names[index] : NULL;
}
