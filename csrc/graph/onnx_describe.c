/* sb_onnx_describe (samebits.h, test support): everything sb_onnx_parse
 * holds, written as JSON, so that a test can set it field by field beside
 * the onnx package's parse of the same bytes (tests/graph/test_core_reader.py).
 *
 * Strings are JSON strings (the reader has checked they are UTF-8; control
 * characters, quotes and backslashes are escaped). Bytes (an attribute's s
 * and strings, raw_data) are lowercase hex; raw_data over RAW_HEX_MAX bytes
 * is given as its length and 64-bit FNV-1a hash instead. Floats are their
 * bit patterns (float: uint32, double: uint64), so they compare exactly.
 * uint64_data is written unsigned; every other integer signed. */
#include <stdio.h>
#include <string.h>
#include "samebits.h"
#include "graph/error.h"
#include "framework/memory.h"
#include "graph/onnx_model.h"

#define RAW_HEX_MAX ((size_t)64 << 10)

typedef struct {
    char *text;
    size_t used, capacity;
    int failed;                  /* out of memory: everything after is dropped */
} out_buf;

static int reserve(out_buf *o, size_t more)
{
    if (o->failed) return 0;
    if (o->capacity - o->used > more) return 1;   /* room for more and the NUL */
    size_t capacity = o->capacity ? o->capacity : 4096;
    while (capacity - o->used <= more) {
        if (capacity > ((size_t)-1) / 2) { o->failed = 1; return 0; }
        capacity *= 2;
    }
    char *bigger = sb_alloc_aligned(capacity);
    if (!bigger) { o->failed = 1; return 0; }
    if (o->used) memcpy(bigger, o->text, o->used);
    sb_free_aligned(o->text);
    o->text = bigger;
    o->capacity = capacity;
    return 1;
}

static void put(out_buf *o, const char *s, size_t n)
{
    if (!reserve(o, n)) return;
    memcpy(o->text + o->used, s, n);
    o->used += n;
    o->text[o->used] = 0;
}

static void puts_(out_buf *o, const char *s) { put(o, s, strlen(s)); }

static void put_i64(out_buf *o, int64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
    put(o, tmp, (size_t)n);
}

static void put_u64(out_buf *o, uint64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    put(o, tmp, (size_t)n);
}

static void put_size(out_buf *o, size_t v) { put_u64(o, (uint64_t)v); }

/* "key": */
static void key(out_buf *o, const char *k, int first)
{
    if (!first) put(o, ",", 1);
    put(o, "\"", 1);
    puts_(o, k);
    put(o, "\":", 2);
}

static void put_string(out_buf *o, const char *s)
{
    if (!s) { puts_(o, "null"); return; }
    put(o, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            put(o, esc, 2);
        } else if (*p < 0x20 || *p == 0x7F) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned)*p);
            put(o, esc, 6);
        } else {
            put(o, (const char *)p, 1);
        }
    }
    put(o, "\"", 1);
}

static void put_hex(out_buf *o, const uint8_t *data, size_t size)
{
    static const char digits[] = "0123456789abcdef";
    if (size > ((size_t)-1) / 2 - 8 || !reserve(o, 2 * size + 2)) { o->failed = 1; return; }
    char *p = o->text + o->used;
    *p++ = '"';
    for (size_t i = 0; i < size; ++i) {
        *p++ = digits[data[i] >> 4];
        *p++ = digits[data[i] & 15];
    }
    *p++ = '"';
    o->used = (size_t)(p - o->text);
    o->text[o->used] = 0;
}

static uint64_t fnv1a64(const uint8_t *data, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; ++i) {
        h ^= data[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void put_i64s(out_buf *o, const int64_t *v, size_t n, int as_unsigned)
{
    put(o, "[", 1);
    for (size_t i = 0; i < n; ++i) {
        if (i) put(o, ",", 1);
        if (as_unsigned) put_u64(o, (uint64_t)v[i]);
        else put_i64(o, v[i]);
    }
    put(o, "]", 1);
}

static void put_f32s(out_buf *o, const float *v, size_t n)
{
    put(o, "[", 1);
    for (size_t i = 0; i < n; ++i) {
        uint32_t bits;
        memcpy(&bits, &v[i], 4);
        if (i) put(o, ",", 1);
        put_u64(o, bits);
    }
    put(o, "]", 1);
}

static void put_f64s(out_buf *o, const double *v, size_t n)
{
    put(o, "[", 1);
    for (size_t i = 0; i < n; ++i) {
        uint64_t bits;
        memcpy(&bits, &v[i], 8);
        if (i) put(o, ",", 1);
        put_u64(o, bits);
    }
    put(o, "]", 1);
}

static void describe_tensor(out_buf *o, const sb_onnx_tensor *t)
{
    if (!t) { puts_(o, "null"); return; }
    put(o, "{", 1);
    key(o, "name", 1), put_string(o, t->name);
    key(o, "dims", 0), put_i64s(o, t->dims.v, t->dims.n, 0);
    key(o, "data_type", 0), put_i64(o, t->data_type);
    key(o, "has_raw", 0), put_i64(o, t->has_raw);
    key(o, "raw_size", 0), put_size(o, t->raw_data.size);
    if (t->raw_data.size <= RAW_HEX_MAX)
        key(o, "raw_data", 0), put_hex(o, t->raw_data.data, t->raw_data.size);
    else
        key(o, "raw_fnv1a64", 0), put_u64(o, fnv1a64(t->raw_data.data, t->raw_data.size));
    key(o, "float_data", 0), put_f32s(o, t->float_data.v, t->float_data.n);
    key(o, "int32_data", 0), put_i64s(o, t->int32_data.v, t->int32_data.n, 0);
    key(o, "int64_data", 0), put_i64s(o, t->int64_data.v, t->int64_data.n, 0);
    key(o, "uint64_data", 0), put_i64s(o, t->uint64_data.v, t->uint64_data.n, 1);
    key(o, "double_data", 0), put_f64s(o, t->double_data.v, t->double_data.n);
    key(o, "string_count", 0), put_size(o, t->string_count);
    key(o, "external_data", 0), put(o, "[", 1);
    for (size_t i = 0; i < t->external_count; ++i) {
        if (i) put(o, ",", 1);
        put(o, "[", 1);
        put_string(o, t->external_keys[i]);
        put(o, ",", 1);
        put_string(o, t->external_values[i]);
        put(o, "]", 1);
    }
    put(o, "]", 1);
    key(o, "data_location", 0), put_i64(o, t->data_location);
    key(o, "has_segment", 0), put_i64(o, t->has_segment);
    put(o, "}", 1);
}

static void describe_value_infos(out_buf *o, const sb_onnx_value_info *v, size_t n)
{
    put(o, "[", 1);
    for (size_t i = 0; i < n; ++i) {
        if (i) put(o, ",", 1);
        put(o, "{", 1);
        key(o, "name", 1), put_string(o, v[i].name);
        key(o, "elem_type", 0), put_i64(o, v[i].elem_type);
        key(o, "kind", 0), put_string(o, v[i].kind);
        key(o, "has_shape", 0), put_i64(o, v[i].has_shape);
        key(o, "dims", 0), put_i64s(o, v[i].dims, (size_t)v[i].rank, 0);
        key(o, "dim_params", 0), put(o, "[", 1);
        for (int d = 0; d < v[i].rank; ++d) {
            if (d) put(o, ",", 1);
            put_string(o, v[i].dim_params[d]);
        }
        put(o, "]", 1);
        put(o, "}", 1);
    }
    put(o, "]", 1);
}

static void describe_strings(out_buf *o, const char *const *s, size_t n)
{
    put(o, "[", 1);
    for (size_t i = 0; i < n; ++i) {
        if (i) put(o, ",", 1);
        put_string(o, s[i]);
    }
    put(o, "]", 1);
}

static void describe_graph(out_buf *o, const sb_onnx_graph *g);

static void describe_attr(out_buf *o, const sb_onnx_attr *a)
{
    uint32_t fbits;
    memcpy(&fbits, &a->f, 4);
    put(o, "{", 1);
    key(o, "name", 1), put_string(o, a->name);
    key(o, "type", 0), put_i64(o, a->type);
    key(o, "f", 0), put_u64(o, fbits);
    key(o, "i", 0), put_i64(o, a->i);
    key(o, "s", 0), put_hex(o, a->s.data, a->s.size);
    key(o, "t", 0), describe_tensor(o, a->t);
    key(o, "g", 0);
    if (a->g) describe_graph(o, a->g);
    else puts_(o, "null");
    key(o, "floats", 0), put_f32s(o, a->floats.v, a->floats.n);
    key(o, "ints", 0), put_i64s(o, a->ints.v, a->ints.n, 0);
    key(o, "strings", 0), put(o, "[", 1);
    for (size_t i = 0; i < a->strings_count; ++i) {
        if (i) put(o, ",", 1);
        put_hex(o, a->strings[i].data, a->strings[i].size);
    }
    put(o, "]", 1);
    key(o, "tensors", 0), put(o, "[", 1);
    for (size_t i = 0; i < a->tensors_count; ++i) {
        if (i) put(o, ",", 1);
        describe_tensor(o, a->tensors[i]);
    }
    put(o, "]", 1);
    key(o, "graphs", 0), put(o, "[", 1);
    for (size_t i = 0; i < a->graphs_count; ++i) {
        if (i) put(o, ",", 1);
        describe_graph(o, a->graphs[i]);
    }
    put(o, "]", 1);
    key(o, "ref_attr_name", 0), put_string(o, a->ref_attr_name);
    put(o, "}", 1);
}

/* Recursion is bounded: the reader refuses graphs nested over SB_ONNX_MAX_DEPTH. */
static void describe_graph(out_buf *o, const sb_onnx_graph *g)
{
    put(o, "{", 1);
    key(o, "name", 1), put_string(o, g->name);
    key(o, "nodes", 0), put(o, "[", 1);
    for (size_t i = 0; i < g->node_count && !o->failed; ++i) {
        const sb_onnx_node *n = &g->nodes[i];
        if (i) put(o, ",", 1);
        put(o, "{", 1);
        key(o, "op_type", 1), put_string(o, n->op_type);
        key(o, "domain", 0), put_string(o, n->domain);
        key(o, "name", 0), put_string(o, n->name);
        key(o, "inputs", 0), describe_strings(o, n->inputs, n->input_count);
        key(o, "outputs", 0), describe_strings(o, n->outputs, n->output_count);
        key(o, "attributes", 0), put(o, "[", 1);
        for (size_t k = 0; k < n->attr_count; ++k) {
            if (k) put(o, ",", 1);
            describe_attr(o, &n->attrs[k]);
        }
        put(o, "]", 1);
        put(o, "}", 1);
    }
    put(o, "]", 1);
    key(o, "initializers", 0), put(o, "[", 1);
    for (size_t i = 0; i < g->initializer_count && !o->failed; ++i) {
        if (i) put(o, ",", 1);
        describe_tensor(o, &g->initializers[i]);
    }
    put(o, "]", 1);
    key(o, "inputs", 0), describe_value_infos(o, g->inputs, g->input_count);
    key(o, "outputs", 0), describe_value_infos(o, g->outputs, g->output_count);
    key(o, "value_info", 0), describe_value_infos(o, g->value_info, g->value_info_count);
    key(o, "sparse_initializer_count", 0), put_size(o, g->sparse_initializer_count);
    put(o, "}", 1);
}

int sb_onnx_describe(const void *data, int64_t size, char **text)
{
    sb_error_clear();
    if (!text) return sb_fail(SB_ERR_ARGUMENT, "sb_onnx_describe: no place for the text");
    *text = NULL;
    if (size < 0 || (size && !data))
        return sb_fail(SB_ERR_ARGUMENT, "sb_onnx_describe: bad model bytes");
    if ((uint64_t)size > (uint64_t)(size_t)-1)
        return sb_fail(SB_ERR_ARGUMENT, "sb_onnx_describe: too many bytes");
    sb_onnx_model *m = NULL;
    int status = sb_onnx_parse(data, (size_t)size, &m);
    if (status) return status;
    out_buf o = {NULL, 0, 0, 0};
    put(&o, "{", 1);
    key(&o, "ir_version", 1), put_i64(&o, m->ir_version);
    key(&o, "producer_name", 0), put_string(&o, m->producer_name);
    key(&o, "producer_version", 0), put_string(&o, m->producer_version);
    key(&o, "opset_import", 0), put(&o, "[", 1);
    for (size_t i = 0; i < m->opset_count; ++i) {
        if (i) put(&o, ",", 1);
        put(&o, "[", 1);
        put_string(&o, m->opsets[i].domain);
        put(&o, ",", 1);
        put_i64(&o, m->opsets[i].version);
        put(&o, "]", 1);
    }
    put(&o, "]", 1);
    key(&o, "functions", 0), describe_strings(&o, m->functions, m->function_count);
    key(&o, "graph", 0), describe_graph(&o, m->graph);
    put(&o, "}", 1);
    sb_onnx_free(m);
    if (o.failed) {
        sb_free_aligned(o.text);
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory while describing the model");
    }
    *text = o.text;
    return SB_OK;
}
