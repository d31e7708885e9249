/* The graph runtime's C API (samebits.h, docs/c-api.md): sessions, their
 * inputs and outputs, runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/error.h"
#include "graph/py_text.h"
#include "framework/memory.h"
#include "graph/plan_cache.h"
#include "graph/model_file.h"
#include "math/narrow_float.h"

void sb_session_free(sb_session *s)
{
    if (!s) return;
    sb_plan_cache_free(&s->cache);
    sb_graph_free(s->graph);
    free(s->last_reader);
    free(s);
}

/* Loads the file a->file names, its folder the default base_dir. */
static int load_file(const sb_load_args *a, sb_graph_options *o, sb_graph **graph)
{
    const char *path = (const char *)(intptr_t)a->file;
    char dir[4096];
    if (!o->base_dir) {
        /* the last separator (a loop, not strrchr: the relaxed-SIMD wasm
         * module may import only the C functions wasm/make_wheel.py allows) */
        const char *slash = NULL;
        for (const char *p = path; *p; ++p)
#ifdef _WIN32
            if (*p == '/' || *p == '\\') slash = p;
#else
            if (*p == '/') slash = p;
#endif
        size_t n = slash ? (size_t)(slash - path) : 1;
        if (n >= sizeof dir) return sb_fail(SB_ERR_VALUE, "the model file's path is too long");
        if (slash) memcpy(dir, path, n);
        else dir[0] = '.';
        if (slash && n == 0) dir[n++] = '/';   /* a file in the root folder */
        dir[n] = 0;
        o->base_dir = dir;
    }
    sb_model_file file;
    int status = sb_model_file_open(path, &file);
    if (status) return status;
    o->file = &file;
    status = sb_graph_load(file.data, file.size, o, graph);
    o->file = NULL;
    sb_model_file_close(&file);
    return status;
}

/* Per value, the last node (run order) that reads it; n_nodes for an output. */
static int find_last_readers(sb_session *s)
{
    sb_graph *g = s->graph;
    s->last_reader = malloc((size_t)(g->n_values + 1) * sizeof(int));
    if (!s->last_reader) return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    for (int v = 0; v < g->n_values; ++v) s->last_reader[v] = g->values[v].is_output ? g->n_nodes : -1;
    for (int k = 0; k < g->n_nodes; ++k)
        for (int i = 0; i < g->nodes[k].n_in; ++i) {
            int v = g->nodes[k].in[i];
            if (v >= 0 && s->last_reader[v] < k) s->last_reader[v] = k;
        }
    return SB_OK;
}

int sb_session_load(const sb_load_args *a)
{
    sb_error_clear();
    if (!a || !a->session) return sb_fail(SB_ERR_ARGUMENT, "sb_session_load: no arguments");
    sb_session **out = (sb_session **)(intptr_t)a->session;
    *out = NULL;
    if (a->mode != SB_MODE_FAST && a->mode != SB_MODE_EXACT)
        return sb_fail(SB_ERR_ARGUMENT, "mode must be 0 (fast) or 1 (exact), got %lld", (long long)a->mode);
    if (a->max_threads < 1) return sb_fail(SB_ERR_ARGUMENT, "max_threads must be at least 1");
    if (a->path < 0 || a->path >= sb_path_count() || !sb_path_supported((int)a->path))
        return sb_fail(SB_ERR_PATH, "path %lld cannot run on this CPU", (long long)a->path);
    if (a->size < 0 || (a->size && !a->data)) return sb_fail(SB_ERR_ARGUMENT, "bad model bytes");
    if (a->file && (a->data || a->size))
        return sb_fail(SB_ERR_ARGUMENT, "give the model's bytes (data, size) or its file, not both");
    if (a->external_count < 0 || (a->external_count && !a->external))
        return sb_fail(SB_ERR_ARGUMENT, "bad external data list");
    sb_graph_options o = {0};
    o.mode = (int)a->mode, o.path = (int)a->path;
    o.threads = a->max_threads > 1024 ? 1024 : (int)a->max_threads;
    o.base_dir = (const char *)(intptr_t)a->base_dir;
    o.external_count = (size_t)a->external_count;
    o.external = (const sb_external_data *)(intptr_t)a->external;
    sb_session *s = calloc(1, sizeof *s);
    if (!s || sb_plan_cache_init(&s->cache)) {
        free(s);
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    }
    int status;
    if (a->file) {
        status = load_file(a, &o, &s->graph);
    } else {
        status = sb_graph_load((const uint8_t *)(intptr_t)a->data, (size_t)a->size, &o, &s->graph);
    }
    if (status) {
        sb_session_free(s);
        return status;
    }
    if ((status = find_last_readers(s))) {
        sb_session_free(s);
        return status;
    }
    *out = s;
    return SB_OK;
}

int sb_session_from_graph(sb_graph *g, sb_session **out)
{
    *out = NULL;
    sb_session *s = calloc(1, sizeof *s);
    if (!s || sb_plan_cache_init(&s->cache)) {
        free(s);
        sb_graph_free(g);
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    }
    s->graph = g;
    int status = find_last_readers(s);
    if (status) {
        sb_session_free(s);
        return status;
    }
    *out = s;
    return SB_OK;
}

int sb_session_io_count(const sb_session *s, int outputs)
{
    if (!s) return 0;
    return outputs ? s->graph->n_outputs : s->graph->n_inputs;
}

int sb_session_io_info(const sb_session *s, int outputs, int index, sb_io_info *info)
{
    if (!s || !info || index < 0 || index >= sb_session_io_count(s, outputs))
        return SB_ERR_ARGUMENT;
    const sb_io *io = outputs ? &s->graph->outputs[index] : &s->graph->inputs[index];
    memset(info, 0, sizeof *info);
    info->name = (int64_t)(intptr_t)io->name;
    info->dtype = io->dtype, info->rank = io->rank;
    for (int d = 0; d < io->rank; ++d) {
        info->dims[d] = io->dims[d];
        info->dim_names[d] = (int64_t)(intptr_t)io->dim_names[d];
    }
    return SB_OK;
}

int sb_session_profile_count(const sb_session *s) { return s ? s->graph->n_labels : 0; }

const char *sb_session_profile_label(const sb_session *s, int index)
{
    return s && index >= 0 && index < s->graph->n_labels ? s->graph->labels[index] : NULL;
}

int sb_session_node_count(const sb_session *s) { return s ? s->graph->n_nodes : 0; }

int sb_session_node_info(const sb_session *s, int index, sb_node_info *info)
{
    if (!s || !info || index < 0 || index >= s->graph->n_nodes) return SB_ERR_ARGUMENT;
    const sb_node *n = &s->graph->nodes[index];
    info->name = (int64_t)(intptr_t)(n->name ? n->name : "");
    info->file_index = n->index;
    info->label = n->label;
    return SB_OK;
}

int sb_session_plan_count(sb_session *s)
{
    if (!s) return 0;
    return sb_plan_cache_count(s);
}

void sb_buffer_free(void *buffer) { sb_free_aligned(buffer); }

/* ---- running ------------------------------------------------------------- */

typedef struct {
    const sb_run_args *args;
    const int64_t *indices;
    sb_tensor_arg *outputs;
} finish_ctx;

/* At the graph's end: each wanted output copied into a new buffer. */
static int copy_outputs(sb_run_state *st)
{
    finish_ctx *f = st->finish_ctx;
    sb_graph *g = st->session->graph;
    for (int64_t k = 0; k < f->args->output_count; ++k) {
        const sb_io *io = &g->outputs[f->indices[k]];
        const sb_vinfo *info = &st->infos[io->value];
        /* a float16 / bfloat16 output: the bits of its type */
        int narrow = (io->dtype == SB_DT_FLOAT16 || io->dtype == SB_DT_BFLOAT16) &&
                     info->dtype == SB_DT_FLOAT;
        int64_t bytes = narrow ? sb_vinfo_numel(info) * 2 : sb_vinfo_bytes(info);
        void *copy = sb_alloc_aligned((size_t)(bytes > 0 ? bytes : 1));
        if (!copy) {
            for (int64_t j = 0; j < k; ++j) sb_free_aligned((void *)(intptr_t)f->outputs[j].data);
            return sb_fail(SB_ERR_NO_MEMORY, "out of memory for output '%s' (%lld bytes)", io->name,
                           (long long)bytes);
        }
        if (narrow) {
            const float *x = st->ptr[io->value];
            uint16_t *h = copy;
            for (int64_t e = 0; e < bytes / 2; ++e)
                h[e] = io->dtype == SB_DT_FLOAT16 ? sb_float16_bits(x[e]) : sb_bfloat16_bits(x[e]);
        } else if (bytes > 0) {
            memcpy(copy, st->ptr[io->value], (size_t)bytes);
        }
        sb_tensor_arg *o = &f->outputs[k];
        memset(o, 0, sizeof *o);
        o->dtype = narrow ? io->dtype : info->dtype, o->rank = info->rank;
        for (int d = 0; d < info->rank; ++d) o->dims[d] = info->dims[d];
        o->data = (int64_t)(intptr_t)copy;
    }
    return SB_OK;
}


/* The inputs checked against the declarations, as infos. */
static int read_inputs(const sb_session *s, const sb_tensor_arg *in, sb_vinfo *infos)
{
    const sb_graph *g = s->graph;
    for (int i = 0; i < g->n_inputs; ++i) {
        const sb_io *io = &g->inputs[i];
        const sb_tensor_arg *t = &in[i];
        int narrow = io->dtype == SB_DT_FLOAT16 || io->dtype == SB_DT_BFLOAT16;
        if (narrow && t->dtype != io->dtype && t->dtype != SB_DT_FLOAT)
            return sb_fail(SB_ERR_TYPE, "input '%s': the model wants %s (or float32, rounded to it), "
                           "got %s", io->name, sb_dtype_name(io->dtype), sb_dtype_name((int)t->dtype));
        if (narrow) {
            /* a float32 copy (narrow_inputs), holding values of the narrow type */
        } else if (sb_dtype_size((int)t->dtype) == 0 || t->dtype != (int)t->dtype)
            return sb_fail(SB_ERR_TYPE, "input '%s': element type %s is not supported (float32, "
                           "integer and bool tensors are)", io->name, sb_dtype_name((int)t->dtype));
        if (!narrow && io->dtype && io->dtype != t->dtype)
            return sb_fail(SB_ERR_TYPE, "input '%s': the model wants %s, got %s", io->name,
                           sb_dtype_name(io->dtype), sb_dtype_name((int)t->dtype));
        if (t->rank < 0 || t->rank > SB_MAX_RANK)
            return sb_fail(SB_ERR_VALUE, "input '%s': rank %lld is not supported (at most %d)",
                           io->name, (long long)t->rank, SB_MAX_RANK);
        memset(&infos[i], 0, sizeof infos[i]);
        infos[i].dtype = narrow ? SB_DT_FLOAT : (int)t->dtype, infos[i].rank = (int)t->rank;
        for (int d = 0; d < t->rank; ++d) {
            if (t->dims[d] < 0 || t->dims[d] > SB_MAX_SIZE)
                return sb_fail(SB_ERR_VALUE, "input '%s': dimension %lld is out of range", io->name,
                               (long long)t->dims[d]);
            infos[i].dims[d] = t->dims[d];
        }
        if (sb_vinfo_numel(&infos[i]) < 0)
            return sb_fail(SB_ERR_VALUE, "input '%s' has more than 2^40 elements", io->name);
        if (sb_vinfo_numel(&infos[i]) > 0 && !t->data)
            return sb_fail(SB_ERR_ARGUMENT, "input '%s': no data", io->name);
        int mismatch = io->rank >= 0 && io->rank != t->rank;
        for (int d = 0; d < io->rank && !mismatch; ++d)
            mismatch = io->dims[d] >= 0 && io->dims[d] != t->dims[d];
        if (mismatch) {
            char want[512], got[512];
            size_t at = 0;
            want[0] = 0;
            at += (size_t)snprintf(want, sizeof want, "(");
            for (int d = 0; d < io->rank && at < sizeof want; ++d)
                at += io->dims[d] >= 0
                      ? (size_t)snprintf(want + at, sizeof want - at, d ? ", %lld" : "%lld", (long long)io->dims[d])
                      : (size_t)snprintf(want + at, sizeof want - at, d ? ", %s" : "%s",
                                         io->dim_names[d] ? io->dim_names[d] : "?");
            if (at < sizeof want) snprintf(want + at, sizeof want - at, io->rank == 1 ? ",)" : ")");
            sb_py_tuple_text(t->dims, (int)t->rank, got, sizeof got);
            return sb_fail(SB_ERR_VALUE, "input '%s': the model wants shape %s, got %s", io->name, want, got);
        }
    }
    return SB_OK;
}

/* The float16 / bfloat16 inputs as float32 buffers holding their values
 * (from their bits, or a float32 input rounded to the type once): *bufs
 * (one per input, null where not narrow) replace their data pointers. */
static int narrow_inputs(const sb_graph *g, const sb_tensor_arg *in, const sb_vinfo *infos,
                         void ***bufs)
{
    *bufs = NULL;
    for (int i = 0; i < g->n_inputs; ++i) {
        int dt = g->inputs[i].dtype;
        if (dt != SB_DT_FLOAT16 && dt != SB_DT_BFLOAT16) continue;
        if (!*bufs && !(*bufs = calloc((size_t)g->n_inputs, sizeof **bufs)))
            return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
        int64_t n = sb_vinfo_numel(&infos[i]);
        float *f = sb_alloc_aligned((size_t)(n > 0 ? n : 1) * 4);
        if (!f) return sb_fail(SB_ERR_NO_MEMORY, "out of memory for input '%s'", g->inputs[i].name);
        (*bufs)[i] = f;
        const void *src = (const void *)(intptr_t)in[i].data;
        for (int64_t k = 0; k < n; ++k) {
            if (in[i].dtype == SB_DT_FLOAT) {
                float x = ((const float *)src)[k];
                f[k] = dt == SB_DT_FLOAT16 ? sb_round_to_float16(x) : sb_round_to_bfloat16(x);
            } else {
                uint16_t h = ((const uint16_t *)src)[k];
                f[k] = dt == SB_DT_FLOAT16 ? sb_float16_value(h) : sb_bfloat16_value(h);
            }
        }
    }
    return SB_OK;
}

static void free_narrow(const sb_graph *g, void **bufs)
{
    if (!bufs) return;
    for (int i = 0; i < g->n_inputs; ++i) sb_free_aligned(bufs[i]);
    free(bufs);
}

/* A root plan starts from the graph's constants and inputs. */
typedef struct { const sb_graph *graph; const sb_vinfo *infos; } root_seed_ctx;

static void root_seed(const void *ctx, sb_plan_value *init)
{
    const root_seed_ctx *c = ctx;
    const sb_graph *g = c->graph;
    for (int v = 0; v < g->n_values; ++v) {
        if (g->values[v].kind == SB_V_CONST) {
            init[v].where = PV_CONST;
            init[v].info = g->values[v].konst.info;
            init[v].data = g->values[v].konst.data;
        }
    }
    for (int i = 0; i < g->n_inputs; ++i) {
        init[g->inputs[i].value].where = PV_EXTERNAL;
        init[g->inputs[i].value].info = c->infos[i];
    }
}

int sb_session_run(sb_session *s, const sb_run_args *a)
{
    sb_error_clear();
    if (!s || !a) return sb_fail(SB_ERR_ARGUMENT, "sb_session_run: no session or arguments");
    sb_graph *g = s->graph;
    const sb_tensor_arg *in = (const sb_tensor_arg *)(intptr_t)a->inputs;
    const int64_t *indices = (const int64_t *)(intptr_t)a->output_indices;
    sb_tensor_arg *outs = (sb_tensor_arg *)(intptr_t)a->outputs;
    if ((g->n_inputs && !in) || a->output_count < 0 || a->output_count > g->n_outputs ||
        (a->output_count && (!indices || !outs)))
        return sb_fail(SB_ERR_ARGUMENT, "sb_session_run: bad arguments");
    for (int64_t k = 0; k < a->output_count; ++k)
        if (indices[k] < 0 || indices[k] >= g->n_outputs)
            return sb_fail(SB_ERR_ARGUMENT, "sb_session_run: output index %lld out of range",
                           (long long)indices[k]);
    sb_vinfo small[8];
    sb_vinfo *infos = g->n_inputs <= 8 ? small : malloc((size_t)g->n_inputs * sizeof *infos);
    if (!infos) return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    int status = read_inputs(s, in, infos);
    void **narrow = NULL;
    if (!status) status = narrow_inputs(g, in, infos, &narrow);
    sb_plan *p = NULL;
    if (!status) {
        root_seed_ctx seed = {g, infos};
        status = sb_plan_cached(s, &s->cache.plans, infos, g->n_inputs, 0, root_seed, &seed, &p);
    }
    if (infos != small) free(infos);
    if (status) {
        free_narrow(g, narrow);
        return status;
    }
    sb_run_state st = {0};
    st.session = s;
    st.threads = a->max_threads > 0 ? (a->max_threads > 1024 ? 1024 : (int)a->max_threads) : g->threads;
    st.ptr = calloc((size_t)g->n_values + 1, sizeof *st.ptr);
    st.infos = malloc((size_t)(g->n_values + 1) * sizeof *st.infos);
    if (!st.ptr || !st.infos) {
        free(st.ptr);
        free(st.infos);
        free_narrow(g, narrow);
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory");
    }
    for (int i = 0; i < g->n_inputs; ++i)
        st.ptr[g->inputs[i].value] = narrow && narrow[i] ? narrow[i] : (void *)(intptr_t)in[i].data;
    st.profile_ns = (int64_t *)(intptr_t)a->profile_ns;
    st.profile_calls = (int64_t *)(intptr_t)a->profile_calls;
    if (!st.profile_calls) st.profile_ns = NULL;
    st.node_ns = (int64_t *)(intptr_t)a->node_ns;
    st.node_calls = (int64_t *)(intptr_t)a->node_calls;
    if (!st.node_calls) st.node_ns = NULL;
    finish_ctx f = {a, indices, outs};
    st.finish = copy_outputs;
    st.finish_ctx = &f;
    status = sb_plan_run(p, &st);
    free_narrow(g, narrow);
    for (int i = 0; i < st.n_heap; ++i) sb_free_aligned(st.heap[i]);
    free(st.heap);
    free(st.ptr);
    free(st.infos);
    return status;
}
