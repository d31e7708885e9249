/* Constants from TensorProto (initializers, Constant's value, attributes):
 * checked against their declared shape and type, float16 / bfloat16 /
 * float64 rounded once to float32 (as ONNX Runtime does when a graph casts
 * them), external data read from the model's folder or taken from the host. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/error.h"
#include "graph/graph.h"
#include "graph/model_file.h"
#include "framework/memory.h"

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1F, mant = h & 0x3FF, bits;
    if (exp == 0x1F) bits = sign | 0x7F800000u | (mant << 13);
    else if (exp) bits = sign | ((exp + 112) << 23) | (mant << 13);
    else if (mant) {               /* subnormal: normalize */
        int e = -1;
        do { mant <<= 1; ++e; } while (!(mant & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((mant & 0x3FF) << 13);
    } else bits = sign;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static float bfloat_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* A double rounded to float32 (IEEE round to nearest; beyond the range: inf). */
static float double_to_float(double d)
{
    if (d != d) return (float)d;
    if (d >= 3.4028235677973366e38) return INFINITY;
    if (d <= -3.4028235677973366e38) return -INFINITY;
    return (float)d;
}

static int parse_size(const char *text, int64_t *out)
{
    char *end;
    if (!text[0]) { *out = 0; return 1; }
    long long v = strtoll(text, &end, 10);
    if (*end || v < 0) return 0;
    *out = v;
    return 1;
}

static const char *external_value(const sb_onnx_tensor *t, const char *key)
{
    const char *found = NULL;
    for (size_t i = 0; i < t->external_count; ++i)
        if (strcmp(t->external_keys[i], key) == 0) found = t->external_values[i];
    return found;
}

/* The bytes of an external tensor into a new buffer (*bytes, *size). */
static int external_bytes(const sb_onnx_tensor *t, const sb_graph_options *o, const char *what,
                          uint8_t **bytes, size_t *size)
{
    const char *location = external_value(t, "location");
    if (!location || !location[0])
        return sb_fail(SB_ERR_VALUE, "%s: tensor '%s': external data without a location", what, t->name);
    int64_t offset = 0, length = -1;
    const char *text = external_value(t, "offset");
    if (text && !parse_size(text, &offset))
        return sb_fail(SB_ERR_VALUE, "%s: tensor '%s': external data offset '%s' is not a size", what, t->name, text);
    text = external_value(t, "length");
    if (text && text[0] && !parse_size(text, &length))
        return sb_fail(SB_ERR_VALUE, "%s: tensor '%s': external data length '%s' is not a size", what, t->name, text);
    const uint8_t *supplied = NULL;
    int64_t supplied_size = 0;
    for (size_t i = 0; o && i < o->external_count; ++i) {
        const char *name = (const char *)(intptr_t)o->external[i].location;
        if (name && strcmp(name, location) == 0) {
            supplied = (const uint8_t *)(intptr_t)o->external[i].data;
            supplied_size = o->external[i].size;
        }
    }
    if (supplied || supplied_size) {
        if (offset > supplied_size || (length >= 0 && length > supplied_size - offset))
            return sb_fail(SB_ERR_VALUE, "%s: tensor '%s': external data '%s' is %lld bytes, too short "
                           "for offset %lld and length %lld", what, t->name, location,
                           (long long)supplied_size, (long long)offset, (long long)length);
        size_t n = (size_t)(length >= 0 ? length : supplied_size - offset);
        *bytes = malloc(n ? n : 1);
        if (!*bytes) return sb_fail(SB_ERR_NO_MEMORY, "%s: out of memory for external data", what);
        if (n) memcpy(*bytes, supplied + offset, n);
        *size = n;
        return SB_OK;
    }
    if (!o || !o->base_dir)
        return sb_fail(SB_ERR_VALUE, "%s: tensor '%s' keeps its data in an external file ('%s'); load "
                       "the model from its path", what, t->name, location);
    /* Only files inside the model's folder: no absolute path, no "..". */
    int escapes = location[0] == '/' || location[0] == '\\' || strchr(location, ':') != NULL;
    for (const char *p = location; *p && !escapes; ) {
        const char *end = p + strcspn(p, "/\\");
        if (end - p == 2 && p[0] == '.' && p[1] == '.') escapes = 1;
        p = *end ? end + 1 : end;
    }
    if (escapes)
        return sb_fail(SB_ERR_VALUE, "%s: tensor '%s': external data '%s' lies outside the model's "
                       "directory", what, t->name, location);
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", o->base_dir, location) >= sizeof path)
        return sb_fail(SB_ERR_VALUE, "%s: tensor '%s': external data path too long", what, t->name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return sb_fail(SB_ERR_VALUE, "%s: tensor '%s': cannot open external data file '%s'", what,
                       t->name, path);
    int status = SB_OK;
    if (fseek(f, 0, SEEK_END) != 0) status = SB_ERR_VALUE;
    long file_size = status ? -1 : ftell(f);
    if (file_size < 0 || offset > file_size || (length >= 0 && length > file_size - offset)) {
        fclose(f);
        return sb_fail(SB_ERR_VALUE, "%s: tensor '%s': external data file '%s' is too short for offset "
                       "%lld and length %lld", what, t->name, path, (long long)offset, (long long)length);
    }
    size_t n = (size_t)(length >= 0 ? length : file_size - offset);
    *bytes = malloc(n ? n : 1);
    if (!*bytes) { fclose(f); return sb_fail(SB_ERR_NO_MEMORY, "%s: out of memory for external data", what); }
    if (fseek(f, (long)offset, SEEK_SET) != 0 || fread(*bytes, 1, n, f) != n) {
        fclose(f);
        free(*bytes);
        *bytes = NULL;
        return sb_fail(SB_ERR_VALUE, "%s: tensor '%s': cannot read external data file '%s'", what, t->name, path);
    }
    fclose(f);
    *size = n;
    return SB_OK;
}

static int fits(int dtype, int64_t v)
{
    switch (dtype) {
    case SB_DT_INT32: return v >= INT32_MIN && v <= INT32_MAX;
    case SB_DT_UINT32: return v >= 0 && v <= (int64_t)UINT32_MAX;
    case SB_DT_INT16: return v >= INT16_MIN && v <= INT16_MAX;
    case SB_DT_UINT16: return v >= 0 && v <= UINT16_MAX;
    case SB_DT_INT8: return v >= INT8_MIN && v <= INT8_MAX;
    case SB_DT_UINT8: return v >= 0 && v <= UINT8_MAX;
    case SB_DT_BOOL: return v == 0 || v == 1;
    default: return 1;
    }
}

static uint64_t le_bits(const uint8_t *p, int width)
{
    uint64_t v = 0;
    for (int k = width - 1; k >= 0; --k) v = v << 8 | p[k];
    return v;
}

/* Elements [first, last) of little-endian raw bytes, as the run-time type. */
static void convert_raw(const uint8_t *raw, int type, int in_size, int64_t first, int64_t last,
                        void *data)
{
    const uint16_t one = 1;
    uint8_t low;
    memcpy(&low, &one, 1);
    if (low == 1 && type != SB_DT_DOUBLE && type != SB_DT_FLOAT16 && type != SB_DT_BFLOAT16 &&
        type != SB_DT_BOOL) {
        /* a little-endian host stores these as the file does */
        memcpy((uint8_t *)data + (size_t)first * (size_t)in_size, raw + (size_t)first * (size_t)in_size,
               (size_t)(last - first) * (size_t)in_size);
        return;
    }
    for (int64_t i = first; i < last; ++i) {
        const uint8_t *p = raw + (size_t)i * (size_t)in_size;
        switch (type) {
        case SB_DT_DOUBLE: {
            uint64_t u = le_bits(p, 8);
            double d;
            memcpy(&d, &u, 8);
            ((float *)data)[i] = double_to_float(d);
            break;
        }
        case SB_DT_FLOAT16: ((float *)data)[i] = half_to_float((uint16_t)le_bits(p, 2)); break;
        case SB_DT_BFLOAT16: ((float *)data)[i] = bfloat_to_float((uint16_t)le_bits(p, 2)); break;
        case SB_DT_BOOL: ((uint8_t *)data)[i] = p[0] != 0; break;
        default: {
            uint64_t u = le_bits(p, in_size);
            memcpy((uint8_t *)data + (size_t)i * (size_t)in_size, &u, (size_t)in_size);
        }
        }
    }
}

int sb_tensor_from_proto(sb_graph *g, const sb_onnx_tensor *t, const sb_graph_options *options,
                         const char *what, sb_tval *out)
{
    memset(out, 0, sizeof *out);
    if (t->dims.n > SB_MAX_RANK)
        return sb_fail(SB_ERR_UNSUPPORTED, "%s: tensor '%s' has %zu dimensions; at most %d are supported",
                       what, t->name, t->dims.n, SB_MAX_RANK);
    out->info.rank = (int)t->dims.n;
    for (size_t d = 0; d < t->dims.n; ++d) {
        if (t->dims.v[d] < 0)
            return sb_fail(SB_ERR_VALUE, "%s: tensor '%s' has a negative dimension", what, t->name);
        out->info.dims[d] = t->dims.v[d];
    }
    int64_t n = sb_vinfo_numel(&out->info);
    if (n < 0)
        return sb_fail(SB_ERR_VALUE, "%s: tensor '%s' has more than 2^40 elements", what, t->name);
    if (t->has_segment)
        return sb_fail(SB_ERR_VALUE, "%s: tensor '%s' is segmented, which is not supported", what, t->name);
    int type = (int)t->data_type;
    int target = type == SB_DT_DOUBLE || type == SB_DT_FLOAT16 || type == SB_DT_BFLOAT16
                 ? SB_DT_FLOAT : type;
    if (t->data_type != type || sb_dtype_size(target) == 0)
        return sb_fail(SB_ERR_UNSUPPORTED, "%s: tensor '%s' has element type %s, which the runner does "
                       "not support (float32, integer and bool tensors are)", what, t->name,
                       sb_dtype_name(type));
    out->info.dtype = target;
    int in_size = type == SB_DT_DOUBLE ? 8 : (type == SB_DT_FLOAT16 || type == SB_DT_BFLOAT16)
                  ? 2 : sb_dtype_size(type);
    const uint8_t *raw = t->has_raw ? t->raw_data.data : NULL;
    size_t raw_size = t->has_raw ? t->raw_data.size : 0;
    int has_raw = t->has_raw;
    uint8_t *external = NULL;
    if (t->data_location == 1) {
        size_t size = 0;
        int status = external_bytes(t, options, what, &external, &size);
        if (status) return status;
        raw = external, raw_size = size, has_raw = 1;
    }
    int status = SB_OK;
    /* the stored size is checked before anything of the declared size is allocated */
    size_t count = 0;
    const sb_i64s *ints = NULL;
    if (!has_raw) {
        switch (type) {
        case SB_DT_FLOAT: count = t->float_data.n; break;
        case SB_DT_DOUBLE: count = t->double_data.n; break;
        case SB_DT_INT64: ints = &t->int64_data; count = ints->n; break;
        case SB_DT_UINT64: case SB_DT_UINT32: ints = &t->uint64_data; count = ints->n; break;
        default: ints = &t->int32_data; count = ints->n; break;   /* float16/bfloat16 bits, small ints */
        }
        if (count != (size_t)n) {
            free(external);
            return sb_fail(SB_ERR_VALUE, "%s: tensor '%s' of %lld elements has %zu %s values", what,
                           t->name, (long long)n, count, sb_dtype_name(type));
        }
    } else if (raw_size != (size_t)n * (size_t)in_size) {
        free(external);
        return sb_fail(SB_ERR_VALUE, "%s: tensor '%s' has %zu bytes of %s data, expected %lld",
                       what, t->name, raw_size, sb_dtype_name(type), (long long)(n * in_size));
    }
    size_t bytes = (size_t)n * (size_t)sb_dtype_size(target);
    void *data = sb_alloc_aligned(bytes ? bytes : 1);
    if (!data || sb_graph_keep_buffer(g, data)) {
        sb_free_aligned(data);
        free(external);
        return sb_fail(SB_ERR_NO_MEMORY, "%s: out of memory for tensor '%s'", what, t->name);
    }
    if (has_raw) {
        /* in chunks, so that a file the runtime mapped (sb_load_args.file)
         * gives each chunk's pages back as soon as it is converted: a large
         * tensor is not held twice */
        const sb_model_file *file = t->data_location == 1 || !options ? NULL : options->file;
        const int64_t chunk = ((int64_t)1 << 22) / in_size;
        for (int64_t first = 0; first < n; first += chunk) {
            int64_t last = first + chunk < n ? first + chunk : n;
            convert_raw(raw, type, in_size, first, last, data);
            if (file)
                sb_model_file_release(file, raw + (size_t)first * (size_t)in_size,
                                      (size_t)(last - first) * (size_t)in_size);
        }
        if (file) sb_model_file_release(file, raw, raw_size);   /* the pages two chunks share */
        goto done;
    }
    /* the typed fields */
    for (int64_t i = 0; i < n; ++i) {
        switch (type) {
        case SB_DT_FLOAT: ((float *)data)[i] = t->float_data.v[i]; break;
        case SB_DT_DOUBLE: ((float *)data)[i] = double_to_float(t->double_data.v[i]); break;
        case SB_DT_FLOAT16: ((float *)data)[i] = half_to_float((uint16_t)ints->v[i]); break;
        case SB_DT_BFLOAT16: ((float *)data)[i] = bfloat_to_float((uint16_t)ints->v[i]); break;
        default:
            if (type != SB_DT_UINT64 && type != SB_DT_INT64 && !fits(type, ints->v[i])) {
                status = sb_fail(SB_ERR_VALUE, "%s: tensor '%s': value %lld does not fit %s", what,
                                 t->name, (long long)ints->v[i], sb_dtype_name(type));
                goto done;
            }
            if (type == SB_DT_UINT32 && (uint64_t)ints->v[i] > UINT32_MAX) {
                status = sb_fail(SB_ERR_VALUE, "%s: tensor '%s': value %llu does not fit uint32", what,
                                 t->name, (unsigned long long)ints->v[i]);
                goto done;
            }
            sb_int_store(data, type, i, ints->v[i]);
        }
    }
done:
    free(external);
    out->data = data;
    return status;
}
