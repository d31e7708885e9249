/* Loads an ONNX model with the graph runtime's C API (samebits.h) and
 * prints each output's shape and SHA-256, then the models-suite digest of
 * all outputs (docs/hash-suite.md): the same bits from C alone, natively
 * and on arm64 under qemu.
 *
 *   run_model MODEL.onnx [FEEDS] [--mode exact|fast] [--threads N] [--path NAME] [--runs N]
 *
 * FEEDS is samebits.onnx.suite.pack_feeds's container (a JSON header line
 * [[name, dtype, shape], ...], then each array's little-endian bytes); without
 * it every float32 input gets the portable test values (seed = its index). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "samebits.h"
#include "sha256.h"

static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(n > 0 ? (size_t)n : 1);
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return data;
}

typedef struct {
    char name[256];
    int dtype;                   /* 1 float32, 7 int64 */
    int rank;
    int64_t dims[16];
    const unsigned char *data;
} feed;

/* The header [[name, dtype, [d, ...]], ...]: strings and numbers in order. */
static int parse_feeds(const unsigned char *data, size_t size, feed *feeds, int cap, int *count)
{
    const unsigned char *end = memchr(data, '\n', size);
    if (!end) return -1;
    const unsigned char *p = data + 1, *blob = end + 1;
    int n = 0, depth = 1;
    while (p < end && depth > 0) {
        if (*p == '[') {
            ++depth;
            if (depth == 2) {
                if (n == cap) return -1;
                memset(&feeds[n], 0, sizeof feeds[n]);
            }
            ++p;
        } else if (*p == ']') {
            if (depth == 2) ++n;
            --depth;
            ++p;
        } else if (*p == '"') {
            const unsigned char *q = memchr(p + 1, '"', (size_t)(end - p - 1));
            if (!q || q - p - 1 >= 255) return -1;
            char text[256];
            memcpy(text, p + 1, (size_t)(q - p - 1));
            text[q - p - 1] = 0;
            if (!feeds[n].name[0]) strcpy(feeds[n].name, text);
            else feeds[n].dtype = strcmp(text, "float32") == 0 ? 1 : strcmp(text, "int64") == 0 ? 7 : 0;
            p = q + 1;
        } else if (*p >= '0' && *p <= '9') {
            long long v = strtoll((const char *)p, (char **)&p, 10);
            if (depth == 3 && feeds[n].rank < 16) feeds[n].dims[feeds[n].rank++] = v;
        } else {
            ++p;
        }
    }
    for (int i = 0; i < n; ++i) {
        int64_t count_i = 1;
        for (int d = 0; d < feeds[i].rank; ++d) count_i *= feeds[i].dims[d];
        feeds[i].data = blob;
        blob += count_i * (feeds[i].dtype == 1 ? 4 : 8);
        if (blob > data + size || !feeds[i].dtype) return -1;
    }
    *count = n;
    return 0;
}

static int elem_size(int64_t dtype)
{
    switch (dtype) {
    case 1: case 6: case 12: return 4;
    case 7: case 13: return 8;
    case 4: case 5: return 2;
    default: return 1;
    }
}

/* An output into the digest: float32 and int64 as their bytes, other
 * integer types as int64 per element. */
static void hash_output(sha256_ctx *c, const sb_tensor_arg *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->rank; ++d) n *= t->dims[d];
    const unsigned char *p = (const unsigned char *)(intptr_t)t->data;
    if (t->dtype == 1 || t->dtype == 7) {
        sha256_update(c, p, (size_t)n * (size_t)elem_size(t->dtype));
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        int64_t v;
        switch (t->dtype) {
        case 6: v = ((const int32_t *)p)[i]; break;
        case 12: v = ((const uint32_t *)p)[i]; break;
        case 13: v = (int64_t)((const uint64_t *)p)[i]; break;
        case 5: v = ((const int16_t *)p)[i]; break;
        case 4: v = ((const uint16_t *)p)[i]; break;
        case 3: v = ((const int8_t *)p)[i]; break;
        default: v = p[i]; break;
        }
        sha256_update(c, &v, 8);
    }
}

int main(int argc, char **argv)
{
    const char *model_path = NULL, *feeds_path = NULL, *path_name = NULL;
    int mode = SB_MODE_EXACT, threads = 1, runs = 1;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--mode") && i + 1 < argc) mode = strcmp(argv[++i], "fast") ? SB_MODE_EXACT : SB_MODE_FAST;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--path") && i + 1 < argc) path_name = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!model_path) model_path = argv[i];
        else feeds_path = argv[i];
    }
    if (!model_path || threads < 1 || runs < 1) {
        fprintf(stderr, "usage: run_model MODEL.onnx [FEEDS] [--mode exact|fast] [--threads N] "
                        "[--path NAME] [--runs N]\n");
        return 2;
    }
    int path = sb_path_best();
    if (path_name) {
        path = -1;
        for (int p = 0; p < sb_path_count(); ++p)
            if (!strcmp(sb_path_name(p), path_name) && sb_path_supported(p)) path = p;
        if (path < 0) {
            fprintf(stderr, "run_model: path %s cannot run here\n", path_name);
            return 2;
        }
    }
    /* the runtime reads the file (and its external data, from its folder) */
    sb_session *session = NULL;
    sb_load_args load = {0};
    load.file = (int64_t)(intptr_t)model_path;
    load.mode = mode, load.path = path, load.max_threads = threads;
    load.session = (int64_t)(intptr_t)&session;
    int status = sb_session_load(&load);
    if (status) {
        fprintf(stderr, "run_model: load: %s (status %d)\n", sb_last_error(), status);
        return 1;
    }
    int n_in = sb_session_io_count(session, 0), n_out = sb_session_io_count(session, 1);
    sb_tensor_arg *inputs = calloc((size_t)n_in + 1, sizeof *inputs);
    feed feeds[64];
    int n_feeds = 0;
    unsigned char *feed_bytes = NULL;
    if (feeds_path) {
        size_t fsize;
        feed_bytes = read_file(feeds_path, &fsize);
        if (!feed_bytes || parse_feeds(feed_bytes, fsize, feeds, 64, &n_feeds)) {
            fprintf(stderr, "run_model: cannot read the feeds %s\n", feeds_path);
            return 2;
        }
    }
    float *made[64] = {0};
    for (int i = 0; i < n_in && i < 64; ++i) {
        sb_io_info info;
        sb_session_io_info(session, 0, i, &info);
        const char *name = (const char *)(intptr_t)info.name;
        int found = 0;
        for (int k = 0; k < n_feeds; ++k) {
            if (strcmp(feeds[k].name, name)) continue;
            inputs[i].dtype = feeds[k].dtype, inputs[i].rank = feeds[k].rank;
            memcpy(inputs[i].dims, feeds[k].dims, sizeof feeds[k].dims);
            inputs[i].data = (int64_t)(intptr_t)feeds[k].data;
            found = 1;
        }
        if (found) continue;
        if (info.dtype != 1 || info.rank < 0) {
            fprintf(stderr, "run_model: input '%s' needs a feed (not a float32 of known rank)\n", name);
            return 2;
        }
        int64_t count = 1;
        inputs[i].dtype = 1, inputs[i].rank = info.rank;
        for (int d = 0; d < info.rank; ++d) {
            inputs[i].dims[d] = info.dims[d] >= 0 ? info.dims[d] : 1;
            count *= inputs[i].dims[d];
        }
        made[i] = malloc((size_t)(count ? count : 1) * 4);
        sb_fill_test_values(made[i], (size_t)count, (uint32_t)i, 0);
        inputs[i].data = (int64_t)(intptr_t)made[i];
    }
    int64_t *indices = calloc((size_t)n_out + 1, sizeof *indices);
    sb_tensor_arg *outputs = calloc((size_t)n_out + 1, sizeof *outputs);
    for (int j = 0; j < n_out; ++j) indices[j] = j;
    sb_run_args run = {0};
    run.inputs = (int64_t)(intptr_t)inputs;
    run.output_count = n_out, run.output_indices = (int64_t)(intptr_t)indices;
    run.outputs = (int64_t)(intptr_t)outputs;
    for (int r = 0; r < runs; ++r) {
        if (r) for (int j = 0; j < n_out; ++j) sb_buffer_free((void *)(intptr_t)outputs[j].data);
        if ((status = sb_session_run(session, &run))) {
            fprintf(stderr, "run_model: run: %s (status %d)\n", sb_last_error(), status);
            return 1;
        }
    }
    sha256_ctx all;
    sha256_init(&all);
    for (int j = 0; j < n_out; ++j) {
        sb_io_info info;
        sb_session_io_info(session, 1, j, &info);
        sha256_ctx one;
        sha256_init(&one);
        hash_output(&one, &outputs[j]);
        hash_output(&all, &outputs[j]);
        char hex[65];
        sha256_hex(&one, hex);
        printf("output %s dtype=%lld shape=(", (const char *)(intptr_t)info.name, (long long)outputs[j].dtype);
        for (int d = 0; d < outputs[j].rank; ++d) printf(d ? ", %lld" : "%lld", (long long)outputs[j].dims[d]);
        printf(") sha256=%s\n", hex);
        sb_buffer_free((void *)(intptr_t)outputs[j].data);
    }
    char hex[65];
    sha256_hex(&all, hex);
    printf("digest %s mode=%s path=%s threads=%d\n", hex, mode == SB_MODE_EXACT ? "exact" : "fast",
           sb_path_name(path), threads);
    for (int i = 0; i < 64; ++i) free(made[i]);
    free(feed_bytes);
    free(inputs);
    free(indices);
    free(outputs);
    sb_session_free(session);
    return 0;
}
