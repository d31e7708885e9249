/* The ONNX operator types the runtime loads, looked up by name: one
 * sb_op_def per row of graph/ops/op_list.h. The ONNX semantics of each op
 * live in its own file under graph/ops/<family>/; this file only registers
 * them. */
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

const sb_op_def *sb_op_find(const char *op_type)
{
    for (size_t k = 0; k < LISTED; ++k)
        if (strcmp(listed[k]->name, op_type) == 0) return listed[k];
    return NULL;
}

static const char *sorted[LISTED];
static size_t sorted_count;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *const *sb_op_names(size_t *count)
{
    if (!sorted_count) {   /* the same list whichever thread builds it first */
        const char *names[LISTED];
        for (size_t k = 0; k < LISTED; ++k) names[k] = listed[k]->name;
        qsort(names, LISTED, sizeof names[0], by_name);
        memcpy(sorted, names, sizeof names);
        sorted_count = LISTED;
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
