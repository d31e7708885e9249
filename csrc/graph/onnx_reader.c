/* The protobuf wire format, read: just what an ONNX file needs (onnx.proto's
 * field numbers; unknown fields are skipped, as protobuf readers do).
 *
 * A message is a sequence of fields, each a key (field number << 3 | wire
 * type) as a varint followed by its value: a varint (type 0), 8 bytes (type
 * 1), a length-prefixed run of bytes (type 2: strings, bytes, nested
 * messages and packed repeated numbers) or 4 bytes (type 5). Every length is
 * checked against what is left of its message before it is used, and graphs
 * nest at most SB_ONNX_MAX_DEPTH deep. Each message is read twice: once to
 * count its repeated fields, once to fill arrays of exactly that size.
 *
 * As protobuf does: of a scalar given more than once the last value wins; a
 * singular message given more than once is merged (graphs and tensors are
 * read as the concatenation of their occurrences, a shape's dimensions are
 * joined); a oneof keeps its last case; int32 and enum fields keep the low
 * 32 bits of their varint; an enum value outside the enum is set aside (an
 * attribute given only types outside it reads as type -1, which no kind
 * matches). Stricter than protobuf: a known field of the wrong wire type,
 * a string that is not UTF-8 or holds a NUL, and groups (wire types 3 and
 * 4) are refused. Looser: the messages the runtime does not read (sparse
 * tensors, type protos, function bodies, ...) are skipped unchecked.
 * tests/graph/test_core_reader.py checks all of it against the onnx package. */
#include <string.h>
#include "samebits.h"
#include "graph/arena.h"
#include "graph/error.h"
#include "graph/onnx_model.h"

enum { VARINT = 0, FIXED64 = 1, LENGTH = 2, FIXED32 = 5 };

typedef struct {
    const uint8_t *p, *end;
} pb_reader;

typedef struct {
    uint32_t number;
    int wire;
    uint64_t value;              /* VARINT, FIXED32, FIXED64 */
    const uint8_t *data;         /* LENGTH */
    size_t size;
} pb_field;

typedef struct {
    sb_arena_block *arena;
    int depth;
} parser;

static int varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t result = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*p >= end) return sb_fail(SB_ERR_DECODE, "a varint runs past the end of its message");
        uint8_t byte = *(*p)++;
        /* the 10th byte's bits beyond 64 are dropped, as protobuf does */
        result |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) {
            *out = result;
            return SB_OK;
        }
    }
    return sb_fail(SB_ERR_DECODE, "a varint is longer than 10 bytes");
}

/* 1: a field was read into f; 0: the message ended; < 0: an error. */
static int next_field(pb_reader *r, pb_field *f)
{
    if (r->p >= r->end) return 0;
    uint64_t key = 0;
    int status = varint(&r->p, r->end, &key);
    if (status) return status;
    if (key >> 3 == 0) return sb_fail(SB_ERR_DECODE, "field number 0");
    if (key >> 3 > 0x1FFFFFFF) return sb_fail(SB_ERR_DECODE, "a field number beyond 2^29");
    f->number = (uint32_t)(key >> 3);
    f->wire = (int)(key & 7);
    f->data = NULL, f->size = 0, f->value = 0;
    size_t left;
    switch (f->wire) {
    case VARINT:
        return (status = varint(&r->p, r->end, &f->value)) ? status : 1;
    case LENGTH: {
        uint64_t size = 0;
        if ((status = varint(&r->p, r->end, &size))) return status;
        left = (size_t)(r->end - r->p);
        if (size > left)
            return sb_fail(SB_ERR_DECODE, "field %u: %llu bytes run past the end of the message",
                           f->number, (unsigned long long)size);
        f->data = r->p, f->size = (size_t)size;
        r->p += size;
        return 1;
    }
    case FIXED32:
        if (r->end - r->p < 4) return sb_fail(SB_ERR_DECODE, "field %u: truncated 4-byte value", f->number);
        for (int i = 3; i >= 0; --i) f->value = f->value << 8 | r->p[i];
        r->p += 4;
        return 1;
    case FIXED64:
        if (r->end - r->p < 8) return sb_fail(SB_ERR_DECODE, "field %u: truncated 8-byte value", f->number);
        for (int i = 7; i >= 0; --i) f->value = f->value << 8 | r->p[i];
        r->p += 8;
        return 1;
    default:   /* 3 and 4 are the long-deprecated groups; 6 and 7 do not exist */
        return sb_fail(SB_ERR_DECODE, "field %u: unsupported wire type %d", f->number, f->wire);
    }
}

static pb_reader reader_of(const uint8_t *data, size_t size)
{
    pb_reader r = {data, data + size};
    return r;
}

#define NO_MEMORY() sb_fail(SB_ERR_NO_MEMORY, "out of memory while reading the model")

static int text(parser *ps, const pb_field *f, const char *what, const char **out)
{
    if (f->wire != LENGTH) return sb_fail(SB_ERR_DECODE, "%s: expected a string", what);
    /* UTF-8, as protobuf requires of strings: no overlong forms, surrogates
     * or code points past U+10FFFF */
    const uint8_t *s = f->data;
    size_t n = f->size;
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t extra;
        uint8_t lo = 0x80, hi = 0xBF;   /* the range of the second byte */
        /* the runtime's strings end at a NUL: one inside would cut the name short */
        if (c == 0) return sb_fail(SB_ERR_DECODE, "%s: contains a NUL character", what);
        if (c < 0x80) extra = 0;
        else if (c >= 0xC2 && c <= 0xDF) extra = 1;
        else if ((c & 0xF0) == 0xE0) {
            extra = 2;
            if (c == 0xE0) lo = 0xA0;        /* else overlong */
            if (c == 0xED) hi = 0x9F;        /* else a surrogate */
        } else if (c >= 0xF0 && c <= 0xF4) {
            extra = 3;
            if (c == 0xF0) lo = 0x90;        /* else overlong */
            if (c == 0xF4) hi = 0x8F;        /* else past U+10FFFF */
        } else return sb_fail(SB_ERR_DECODE, "%s: not UTF-8", what);
        if (extra > n - i - 1 || (extra && (s[i + 1] < lo || s[i + 1] > hi)))
            return sb_fail(SB_ERR_DECODE, "%s: not UTF-8", what);
        for (size_t k = 2; k <= extra; ++k)
            if ((s[i + k] & 0xC0) != 0x80) return sb_fail(SB_ERR_DECODE, "%s: not UTF-8", what);
        i += extra + 1;
    }
    *out = sb_arena_strdup(&ps->arena, (const char *)f->data, f->size);
    return *out ? SB_OK : NO_MEMORY();
}

static int message(const pb_field *f, const char *what)
{
    return f->wire == LENGTH ? SB_OK : sb_fail(SB_ERR_DECODE, "%s: expected a nested message", what);
}

/* A scalar field written with another wire type: protobuf would set it
 * aside as an unknown field; no ONNX writer produces one, and reading its
 * bits as the value would be wrong, so the file is refused. */
static int scalar(const pb_field *f, const char *what)
{
    return f->wire == VARINT ? SB_OK : sb_fail(SB_ERR_DECODE, "%s: expected a varint", what);
}

static int64_t signed64(uint64_t v) { return (int64_t)v; }
/* an int32 (or enum) field: protobuf keeps the low 32 bits of the varint */
static int64_t signed32(uint64_t v) { return (int64_t)(int32_t)(uint32_t)v; }

/* The payload of a singular message field. protobuf merges a field that
 * occurs more than once, which is reading the concatenation of its
 * occurrences: one is its own slice, several are joined in the arena. */
static int merged_message(parser *ps, const uint8_t *data, size_t size, uint32_t number,
                          const char *what, sb_bytes *out)
{
    pb_reader r = {data, data + size};
    pb_field f = {0};
    int got;
    size_t count = 0, total = 0;
    out->data = NULL, out->size = 0;
    while ((got = next_field(&r, &f)) > 0) {
        if (f.number != number) continue;
        int status = message(&f, what);
        if (status) return status;
        if (count++ == 0) out->data = f.data;
        total += f.size;         /* at most size: the payloads lie within the message */
    }
    if (got < 0) return got;
    out->size = total;
    if (count < 2) return SB_OK;
    uint8_t *joined = sb_arena_alloc(&ps->arena, total, 1);
    if (!joined) return NO_MEMORY();
    size_t at = 0;
    r.p = data;
    while (next_field(&r, &f) > 0)
        if (f.number == number) memcpy(joined + at, f.data, f.size), at += f.size;
    out->data = joined;
    return SB_OK;
}

/* ---- repeated numbers (packed or one value per occurrence) ---------------- */

static int count_varints(const pb_field *f, size_t *n, const char *what)
{
    if (f->wire == VARINT) { ++*n; return SB_OK; }
    if (f->wire != LENGTH) return sb_fail(SB_ERR_DECODE, "%s: expected integers", what);
    for (size_t i = 0; i < f->size; ++i) *n += f->data[i] < 0x80;
    return SB_OK;
}

static int read_varints(const pb_field *f, int64_t *v, size_t *at, size_t cap, int as_int32,
                        const char *what)
{
    if (f->wire == VARINT) {
        if (*at >= cap) return sb_fail(SB_ERR_DECODE, "%s: inconsistent count", what);
        v[(*at)++] = as_int32 ? (int64_t)(int32_t)(uint32_t)f->value : signed64(f->value);
        return SB_OK;
    }
    const uint8_t *p = f->data, *end = f->data + f->size;
    while (p < end) {
        uint64_t x = 0;
        int status = varint(&p, end, &x);
        if (status) return status;
        if (*at >= cap) return sb_fail(SB_ERR_DECODE, "%s: inconsistent count", what);
        v[(*at)++] = as_int32 ? (int64_t)(int32_t)(uint32_t)x : signed64(x);
    }
    return SB_OK;
}

static int count_fixed(const pb_field *f, int width, size_t *n, const char *what)
{
    if ((width == 4 && f->wire == FIXED32) || (width == 8 && f->wire == FIXED64)) { ++*n; return SB_OK; }
    if (f->wire != LENGTH || f->size % (size_t)width)
        return sb_fail(SB_ERR_DECODE, "%s: expected packed %d-byte numbers", what, width);
    *n += f->size / (size_t)width;
    return SB_OK;
}

static void read_f32(const pb_field *f, float *v, size_t *at)
{
    if (f->wire == FIXED32) {
        uint32_t u = (uint32_t)f->value;
        memcpy(&v[(*at)++], &u, 4);
        return;
    }
    for (size_t i = 0; i < f->size; i += 4) {
        uint32_t u = (uint32_t)f->data[i] | (uint32_t)f->data[i + 1] << 8 |
                     (uint32_t)f->data[i + 2] << 16 | (uint32_t)f->data[i + 3] << 24;
        memcpy(&v[(*at)++], &u, 4);
    }
}

static void read_f64(const pb_field *f, double *v, size_t *at)
{
    if (f->wire == FIXED64) {
        memcpy(&v[(*at)++], &f->value, 8);
        return;
    }
    for (size_t i = 0; i < f->size; i += 8) {
        uint64_t u = 0;
        for (int k = 7; k >= 0; --k) u = u << 8 | f->data[i + (size_t)k];
        memcpy(&v[(*at)++], &u, 8);
    }
}

/* ---- TensorProto ---------------------------------------------------------- */

static int parse_tensor(parser *ps, const uint8_t *data, size_t size, sb_onnx_tensor *t)
{
    pb_reader r = reader_of(data, size);
    pb_field f = {0};
    int got;
    size_t ndims = 0, nfloat = 0, nint32 = 0, nint64 = 0, nuint64 = 0, ndouble = 0, next = 0;
    while ((got = next_field(&r, &f)) > 0) {
        int status = SB_OK;
        switch (f.number) {
        case 1: status = count_varints(&f, &ndims, "TensorProto.dims"); break;
        case 4: status = count_fixed(&f, 4, &nfloat, "TensorProto.float_data"); break;
        case 5: status = count_varints(&f, &nint32, "TensorProto.int32_data"); break;
        case 6: status = message(&f, "TensorProto.string_data"); t->string_count += !status; break;
        case 7: status = count_varints(&f, &nint64, "TensorProto.int64_data"); break;
        case 10: status = count_fixed(&f, 8, &ndouble, "TensorProto.double_data"); break;
        case 11: status = count_varints(&f, &nuint64, "TensorProto.uint64_data"); break;
        case 13: status = message(&f, "TensorProto.external_data"); ++next; break;
        }
        if (status) return status;
    }
    if (got < 0) return got;
    t->dims.v = sb_arena_alloc(&ps->arena, ndims, sizeof(int64_t));
    t->float_data.v = sb_arena_alloc(&ps->arena, nfloat, sizeof(float));
    t->int32_data.v = sb_arena_alloc(&ps->arena, nint32, sizeof(int64_t));
    t->int64_data.v = sb_arena_alloc(&ps->arena, nint64, sizeof(int64_t));
    t->uint64_data.v = sb_arena_alloc(&ps->arena, nuint64, sizeof(int64_t));
    t->double_data.v = sb_arena_alloc(&ps->arena, ndouble, sizeof(double));
    t->external_keys = sb_arena_alloc(&ps->arena, next, sizeof(char *));
    t->external_values = sb_arena_alloc(&ps->arena, next, sizeof(char *));
    if (!t->dims.v || !t->float_data.v || !t->int32_data.v || !t->int64_data.v ||
        !t->uint64_data.v || !t->double_data.v || !t->external_keys || !t->external_values)
        return NO_MEMORY();
    t->name = "";
    r = reader_of(data, size);
    while ((got = next_field(&r, &f)) > 0) {
        int status = SB_OK;
        switch (f.number) {
        case 1: status = read_varints(&f, t->dims.v, &t->dims.n, ndims, 0, "TensorProto.dims"); break;
        case 2:
            if (!(status = scalar(&f, "TensorProto.data_type"))) t->data_type = signed32(f.value);
            break;
        case 3: status = message(&f, "TensorProto.segment"); t->has_segment = 1; break;
        case 4: read_f32(&f, t->float_data.v, &t->float_data.n); break;
        case 5: status = read_varints(&f, t->int32_data.v, &t->int32_data.n, nint32, 1,
                                      "TensorProto.int32_data"); break;
        case 7: status = read_varints(&f, t->int64_data.v, &t->int64_data.n, nint64, 0,
                                      "TensorProto.int64_data"); break;
        case 8: status = text(ps, &f, "TensorProto.name", &t->name); break;
        case 9:
            if ((status = message(&f, "TensorProto.raw_data"))) break;
            t->has_raw = 1, t->raw_data.data = f.data, t->raw_data.size = f.size;
            break;
        case 10: read_f64(&f, t->double_data.v, &t->double_data.n); break;
        case 11: status = read_varints(&f, t->uint64_data.v, &t->uint64_data.n, nuint64, 0,
                                       "TensorProto.uint64_data"); break;
        case 13: {
            pb_reader e = reader_of(f.data, f.size);
            pb_field g = {0};
            int got2;
            const char *key = "", *value = "";
            while ((got2 = next_field(&e, &g)) > 0) {
                if (g.number == 1) status = text(ps, &g, "StringStringEntryProto.key", &key);
                else if (g.number == 2) status = text(ps, &g, "StringStringEntryProto.value", &value);
                if (status) return status;
            }
            if (got2 < 0) return got2;
            t->external_keys[t->external_count] = key;
            t->external_values[t->external_count++] = value;
            break;
        }
        case 14: {
            /* an enum: protobuf sets a value it does not know aside, as unknown */
            if ((status = scalar(&f, "TensorProto.data_location"))) break;
            int64_t v = signed32(f.value);
            if (v == 0 || v == 1) t->data_location = v;
            break;
        }
        }
        if (status) return status;
    }
    return got < 0 ? got : SB_OK;
}

/* ---- ValueInfoProto ---------------------------------------------------------- */

/* Appends the shape's dimensions to v's: protobuf merges a shape (or the
 * TypeProto holding it) that occurs more than once by joining the lists. */
static int parse_shape(parser *ps, const uint8_t *data, size_t size, sb_onnx_value_info *v)
{
    pb_reader r = reader_of(data, size);
    pb_field f = {0};
    int got;
    size_t rank = (size_t)v->rank;
    while ((got = next_field(&r, &f)) > 0) rank += f.number == 1;
    if (got < 0) return got;
    if (rank > 0x7FFFFFF) return sb_fail(SB_ERR_DECODE, "TensorShapeProto: too many dimensions");
    int64_t *dims = sb_arena_alloc(&ps->arena, rank, sizeof(int64_t));
    const char **params = sb_arena_alloc(&ps->arena, rank, sizeof(char *));
    if (!dims || !params) return NO_MEMORY();
    if (v->rank) {
        memcpy(dims, v->dims, (size_t)v->rank * sizeof *dims);
        memcpy(params, v->dim_params, (size_t)v->rank * sizeof *params);
    }
    v->dims = dims, v->dim_params = params;
    v->has_shape = 1;
    r = reader_of(data, size);
    while ((got = next_field(&r, &f)) > 0) {
        if (f.number != 1) continue;
        int status = message(&f, "TensorShapeProto.dim");
        if (status) return status;
        int64_t dim = -1;
        const char *param = NULL;
        pb_reader d = reader_of(f.data, f.size);
        pb_field g = {0};
        int got2;
        while ((got2 = next_field(&d, &g)) > 0) {
            if (g.number == 1 && g.wire == VARINT) dim = signed64(g.value), param = NULL;
            else if (g.number == 2) {
                if ((status = text(ps, &g, "Dimension.dim_param", &param))) return status;
                dim = -1;
            }
        }
        if (got2 < 0) return got2;
        v->dims[v->rank] = dim < 0 ? -1 : dim;
        v->dim_params[v->rank++] = param;
    }
    return got < 0 ? got : SB_OK;
}

/* TypeProto's cases are a oneof: the last one set wins, and setting another
 * clears what the tensor case held. */
static int parse_type(parser *ps, const uint8_t *data, size_t size, sb_onnx_value_info *v)
{
    pb_reader t = reader_of(data, size);
    pb_field g = {0};
    int got, status = SB_OK;
    static const char *const kinds[10] = {
        NULL, "tensor", NULL, NULL, "sequence", "map", NULL, "opaque", "sparse tensor", "optional"};
    static const char *const fields[10] = {
        NULL, "TypeProto.tensor_type", NULL, NULL, "TypeProto.sequence_type", "TypeProto.map_type",
        NULL, "TypeProto.opaque_type", "TypeProto.sparse_tensor_type", "TypeProto.optional_type"};
    while ((got = next_field(&t, &g)) > 0) {
        const char *kind = g.number < 10 ? kinds[g.number] : NULL;
        if (!kind) continue;
        if ((status = message(&g, fields[g.number]))) return status;
        if (strcmp(v->kind, kind) != 0) {
            v->elem_type = 0, v->has_shape = 0, v->rank = 0;
            v->dims = NULL, v->dim_params = NULL;
            v->kind = kind;
        }
        if (g.number != 1) continue;
        pb_reader tt = reader_of(g.data, g.size);
        pb_field h = {0};
        int got2;
        while ((got2 = next_field(&tt, &h)) > 0) {
            if (h.number == 1) {
                if ((status = scalar(&h, "TypeProto.Tensor.elem_type"))) return status;
                v->elem_type = signed32(h.value);
            } else if (h.number == 2) {
                if ((status = message(&h, "TensorShapeProto"))) return status;
                if ((status = parse_shape(ps, h.data, h.size, v))) return status;
            }
        }
        if (got2 < 0) return got2;
    }
    return got < 0 ? got : SB_OK;
}

static int parse_value_info(parser *ps, const uint8_t *data, size_t size, sb_onnx_value_info *v)
{
    pb_reader r = reader_of(data, size);
    pb_field f = {0};
    int got, status = SB_OK;
    v->name = "";
    v->kind = "tensor";
    while ((got = next_field(&r, &f)) > 0) {
        if (f.number == 1) status = text(ps, &f, "ValueInfoProto.name", &v->name);
        else if (f.number == 2) {
            if ((status = message(&f, "TypeProto"))) return status;
            status = parse_type(ps, f.data, f.size, v);
        }
        if (status) return status;
    }
    return got < 0 ? got : SB_OK;
}

/* ---- AttributeProto, NodeProto, GraphProto ------------------------------------ */

static int parse_graph(parser *ps, const uint8_t *data, size_t size, sb_onnx_graph *g);

static int nested_graph(parser *ps, const uint8_t *data, size_t size, sb_onnx_graph **out)
{
    int status;
    if (ps->depth >= SB_ONNX_MAX_DEPTH)
        return sb_fail(SB_ERR_DECODE, "graphs are nested more than %d deep", SB_ONNX_MAX_DEPTH);
    *out = sb_arena_alloc(&ps->arena, 1, sizeof **out);
    if (!*out) return NO_MEMORY();
    ps->depth++;
    status = parse_graph(ps, data, size, *out);
    ps->depth--;
    return status;
}

static int parse_attribute(parser *ps, const uint8_t *data, size_t size, sb_onnx_attr *a)
{
    pb_reader r = reader_of(data, size);
    pb_field f = {0};
    int got, status = SB_OK;
    size_t nfloats = 0, nints = 0, nstrings = 0, ntensors = 0, ngraphs = 0;
    int64_t declared = 0;
    int declared_known = 0, declared_unknown = 0;
    while ((got = next_field(&r, &f)) > 0) {
        switch (f.number) {
        case 7: status = count_fixed(&f, 4, &nfloats, "AttributeProto.floats"); break;
        case 8: status = count_varints(&f, &nints, "AttributeProto.ints"); break;
        case 9: ++nstrings; break;
        case 10: ++ntensors; break;
        case 11: ++ngraphs; break;
        }
        if (status) return status;
    }
    if (got < 0) return got;
    a->floats.v = sb_arena_alloc(&ps->arena, nfloats, sizeof(float));
    a->ints.v = sb_arena_alloc(&ps->arena, nints, sizeof(int64_t));
    a->strings = sb_arena_alloc(&ps->arena, nstrings, sizeof(sb_bytes));
    a->tensors = sb_arena_alloc(&ps->arena, ntensors, sizeof(sb_onnx_tensor *));
    a->graphs = sb_arena_alloc(&ps->arena, ngraphs, sizeof(sb_onnx_graph *));
    if (!a->floats.v || !a->ints.v || !a->strings || !a->tensors || !a->graphs) return NO_MEMORY();
    a->name = "";
    int seen[16] = {0};          /* which single-value kinds were present */
    r = reader_of(data, size);
    while ((got = next_field(&r, &f)) > 0) {
        switch (f.number) {
        case 1: status = text(ps, &f, "AttributeProto.name", &a->name); break;
        case 20:
            /* an enum: protobuf sets a value outside it aside (the last known one stays) */
            if ((status = scalar(&f, "AttributeProto.type"))) break;
            if (signed32(f.value) >= 0 && signed32(f.value) <= SB_A_TYPE_PROTOS)
                declared = signed32(f.value), declared_known = 1;
            else
                declared_unknown = 1;
            break;
        case 2:
            if (f.wire != FIXED32) return sb_fail(SB_ERR_DECODE, "attribute %s: expected a 4-byte float", a->name);
            { uint32_t u = (uint32_t)f.value; memcpy(&a->f, &u, 4); }
            seen[SB_A_FLOAT] = 1;
            break;
        case 3:
            if ((status = scalar(&f, "AttributeProto.i"))) break;
            a->i = signed64(f.value), seen[SB_A_INT] = 1;
            break;
        case 4:
            if ((status = message(&f, "AttributeProto.s"))) break;
            a->s.data = f.data, a->s.size = f.size, seen[SB_A_STRING] = 1;
            break;
        case 5: {   /* every occurrence merged, read at the first */
            if (seen[SB_A_TENSOR]) break;
            sb_bytes t;
            if ((status = merged_message(ps, data, size, 5, "AttributeProto.t", &t))) break;
            if (!(a->t = sb_arena_alloc(&ps->arena, 1, sizeof *a->t))) return NO_MEMORY();
            status = parse_tensor(ps, t.data, t.size, a->t);
            seen[SB_A_TENSOR] = 1;
            break;
        }
        case 6: {
            if (seen[SB_A_GRAPH]) break;
            sb_bytes g;
            if ((status = merged_message(ps, data, size, 6, "AttributeProto.g", &g))) break;
            status = nested_graph(ps, g.data, g.size, &a->g);
            seen[SB_A_GRAPH] = 1;
            break;
        }
        case 7: read_f32(&f, a->floats.v, &a->floats.n); break;
        case 8: status = read_varints(&f, a->ints.v, &a->ints.n, nints, 0, "AttributeProto.ints"); break;
        case 9:
            if ((status = message(&f, "AttributeProto.strings"))) break;
            a->strings[a->strings_count].data = f.data;
            a->strings[a->strings_count++].size = f.size;
            break;
        case 10:
            if ((status = message(&f, "AttributeProto.tensors"))) break;
            {
                sb_onnx_tensor *t = sb_arena_alloc(&ps->arena, 1, sizeof *t);
                if (!t) return NO_MEMORY();
                status = parse_tensor(ps, f.data, f.size, t);
                a->tensors[a->tensors_count++] = t;
            }
            break;
        case 11:
            if ((status = message(&f, "AttributeProto.graphs"))) break;
            status = nested_graph(ps, f.data, f.size, &a->graphs[a->graphs_count]);
            a->graphs_count += status == SB_OK;
            break;
        /* kept only to name them in errors */
        case 22:
            status = message(&f, "AttributeProto.sparse_tensor"), seen[SB_A_SPARSE_TENSOR] = 1;
            break;
        case 23:
            status = message(&f, "AttributeProto.sparse_tensors"), seen[SB_A_SPARSE_TENSORS] = 1;
            break;
        case 14: status = message(&f, "AttributeProto.tp"), seen[SB_A_TYPE_PROTO] = 1; break;
        case 15: status = message(&f, "AttributeProto.type_protos"), seen[SB_A_TYPE_PROTOS] = 1; break;
        case 21: status = text(ps, &f, "AttributeProto.ref_attr_name", &a->ref_attr_name); break;
        }
        if (status) return status;
    }
    if (got < 0) return got;
    seen[SB_A_FLOATS] = nfloats > 0, seen[SB_A_INTS] = nints > 0, seen[SB_A_STRINGS] = nstrings > 0;
    seen[SB_A_TENSORS] = ntensors > 0, seen[SB_A_GRAPHS] = ngraphs > 0;
    if (!declared_known && declared_unknown) declared = -1;   /* an unknown kind: never matches */
    else if (declared == 0) {
        /* IR version 1 files carry no type: infer it from the one field set */
        int present = 0, kind = 0;
        for (int k = 1; k <= 14; ++k)
            if (seen[k]) ++present, kind = k;
        declared = present == 1 ? kind : 0;
    }
    a->type = (int)declared;
    return SB_OK;
}

static int parse_node(parser *ps, const uint8_t *data, size_t size, sb_onnx_node *n)
{
    pb_reader r = reader_of(data, size);
    pb_field f = {0};
    int got, status = SB_OK;
    size_t nin = 0, nout = 0, nattr = 0;
    while ((got = next_field(&r, &f)) > 0) {
        nin += f.number == 1, nout += f.number == 2, nattr += f.number == 5;
    }
    if (got < 0) return got;
    n->inputs = sb_arena_alloc(&ps->arena, nin, sizeof(char *));
    n->outputs = sb_arena_alloc(&ps->arena, nout, sizeof(char *));
    n->attrs = sb_arena_alloc(&ps->arena, nattr, sizeof(sb_onnx_attr));
    if (!n->inputs || !n->outputs || !n->attrs) return NO_MEMORY();
    n->op_type = n->domain = n->name = "";
    r = reader_of(data, size);
    while ((got = next_field(&r, &f)) > 0) {
        switch (f.number) {
        case 1: status = text(ps, &f, "NodeProto.input", &n->inputs[n->input_count++]); break;
        case 2: status = text(ps, &f, "NodeProto.output", &n->outputs[n->output_count++]); break;
        case 3: status = text(ps, &f, "NodeProto.name", &n->name); break;
        case 4: status = text(ps, &f, "NodeProto.op_type", &n->op_type); break;
        case 7: status = text(ps, &f, "NodeProto.domain", &n->domain); break;
        case 5:
            if ((status = message(&f, "NodeProto.attribute"))) break;
            status = parse_attribute(ps, f.data, f.size, &n->attrs[n->attr_count++]);
            break;
        }
        if (status) return status;
    }
    return got < 0 ? got : SB_OK;
}

static int parse_graph(parser *ps, const uint8_t *data, size_t size, sb_onnx_graph *g)
{
    pb_reader r = reader_of(data, size);
    pb_field f = {0};
    int got, status = SB_OK;
    size_t nn = 0, ni = 0, nin = 0, nout = 0, nvi = 0;
    while ((got = next_field(&r, &f)) > 0) {
        nn += f.number == 1, ni += f.number == 5, nin += f.number == 11;
        nout += f.number == 12, nvi += f.number == 13;
        if (f.number == 15 && f.wire != LENGTH)
            return sb_fail(SB_ERR_DECODE, "GraphProto field 15: expected a nested message");
        g->sparse_initializer_count += f.number == 15;
    }
    if (got < 0) return got;
    g->nodes = sb_arena_alloc(&ps->arena, nn, sizeof(sb_onnx_node));
    g->initializers = sb_arena_alloc(&ps->arena, ni, sizeof(sb_onnx_tensor));
    g->inputs = sb_arena_alloc(&ps->arena, nin, sizeof(sb_onnx_value_info));
    g->outputs = sb_arena_alloc(&ps->arena, nout, sizeof(sb_onnx_value_info));
    g->value_info = sb_arena_alloc(&ps->arena, nvi, sizeof(sb_onnx_value_info));
    if (!g->nodes || !g->initializers || !g->inputs || !g->outputs || !g->value_info)
        return NO_MEMORY();
    g->name = "";
    r = reader_of(data, size);
    while ((got = next_field(&r, &f)) > 0) {
        if (f.wire != LENGTH && (f.number == 1 || f.number == 5 || f.number == 11 ||
                                 f.number == 12 || f.number == 13))
            return sb_fail(SB_ERR_DECODE, "GraphProto field %u: expected a nested message", f.number);
        switch (f.number) {
        case 1: status = parse_node(ps, f.data, f.size, &g->nodes[g->node_count++]); break;
        case 2: status = text(ps, &f, "GraphProto.name", &g->name); break;
        case 5: status = parse_tensor(ps, f.data, f.size, &g->initializers[g->initializer_count++]); break;
        case 11: status = parse_value_info(ps, f.data, f.size, &g->inputs[g->input_count++]); break;
        case 12: status = parse_value_info(ps, f.data, f.size, &g->outputs[g->output_count++]); break;
        case 13: status = parse_value_info(ps, f.data, f.size, &g->value_info[g->value_info_count++]); break;
        }
        if (status) return status;
    }
    return got < 0 ? got : SB_OK;
}

int sb_onnx_parse(const uint8_t *data, size_t size, sb_onnx_model **out)
{
    *out = NULL;
    parser ps = {NULL, 0};
    sb_onnx_model *m = sb_arena_alloc(&ps.arena, 1, sizeof *m);
    if (!m) return NO_MEMORY();
    if (!data && size) return sb_fail(SB_ERR_ARGUMENT, "the model's bytes are missing");
    pb_reader r = reader_of(data, size);
    pb_field f = {0};
    int got, status = SB_OK;
    size_t nops = 0, nfun = 0;
    while ((got = next_field(&r, &f)) > 0) nops += f.number == 8, nfun += f.number == 25;
    if (got < 0) goto fail;
    m->opsets = sb_arena_alloc(&ps.arena, nops, sizeof(sb_onnx_opset));
    m->functions = sb_arena_alloc(&ps.arena, nfun, sizeof(char *));
    if (!m->opsets || !m->functions) { got = NO_MEMORY(); goto fail; }
    m->producer_name = m->producer_version = "";
    r = reader_of(data, size);
    while ((got = next_field(&r, &f)) > 0) {
        switch (f.number) {
        case 1:
            if (!(status = scalar(&f, "ModelProto.ir_version"))) m->ir_version = signed64(f.value);
            break;
        case 2: status = text(&ps, &f, "ModelProto.producer_name", &m->producer_name); break;
        case 3: status = text(&ps, &f, "ModelProto.producer_version", &m->producer_version); break;
        case 7: {
            /* protobuf merges a graph given more than once (ONNX writes one):
             * every occurrence is read at the first */
            if (m->graph) break;
            sb_bytes g;
            if ((status = merged_message(&ps, data, size, 7, "ModelProto.graph", &g))) break;
            if (!(m->graph = sb_arena_alloc(&ps.arena, 1, sizeof *m->graph))) {
                status = NO_MEMORY();
                break;
            }
            status = parse_graph(&ps, g.data, g.size, m->graph);
            break;
        }
        case 8: {
            if ((status = message(&f, "ModelProto.opset_import"))) break;
            sb_onnx_opset *o = &m->opsets[m->opset_count++];
            o->domain = "";
            pb_reader e = reader_of(f.data, f.size);
            pb_field g = {0};
            int got2;
            while ((got2 = next_field(&e, &g)) > 0) {
                if (g.number == 1) status = text(&ps, &g, "OperatorSetIdProto.domain", &o->domain);
                else if (g.number == 2 && !(status = scalar(&g, "OperatorSetIdProto.version")))
                    o->version = signed64(g.value);
                if (status) break;
            }
            if (got2 < 0) status = got2;
            break;
        }
        case 25: {
            if ((status = message(&f, "ModelProto.functions"))) break;
            const char **name = &m->functions[m->function_count++];
            *name = "";
            pb_reader e = reader_of(f.data, f.size);
            pb_field g = {0};
            int got2;
            while ((got2 = next_field(&e, &g)) > 0)
                if (g.number == 1 && (status = text(&ps, &g, "FunctionProto.name", name))) break;
            if (got2 < 0) status = got2;
            break;
        }
        }
        if (status) { got = status; goto fail; }
    }
    if (got < 0) goto fail;
    if (!m->graph) {
        got = sb_fail(SB_ERR_DECODE, "the model has no graph (is this an ONNX file?)");
        goto fail;
    }
    m->arena = ps.arena;
    *out = m;
    return SB_OK;
fail:
    sb_arena_free(ps.arena);
    return got;
}

void sb_onnx_free(sb_onnx_model *model)
{
    if (model) sb_arena_free(model->arena);
}

int64_t sb_onnx_opset_of(const sb_onnx_model *model, const char *domain)
{
    int want_default = domain[0] == 0 || strcmp(domain, "ai.onnx") == 0;
    int64_t found = -1;
    for (size_t i = 0; i < model->opset_count; ++i) {
        const char *d = model->opsets[i].domain;
        int is_default = d[0] == 0 || strcmp(d, "ai.onnx") == 0;
        if (want_default ? is_default : strcmp(d, domain) == 0) found = model->opsets[i].version;
    }
    return found;
}

const sb_onnx_attr *sb_onnx_find_attr(const sb_onnx_node *node, const char *name)
{
    const sb_onnx_attr *found = NULL;
    for (size_t i = 0; i < node->attr_count; ++i)   /* the last of a repeated name wins */
        if (strcmp(node->attrs[i].name, name) == 0) found = &node->attrs[i];
    return found;
}
