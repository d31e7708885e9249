/* One session run from many host threads at once, on mixed input shapes:
 * every run must give the bits the same shapes give alone.
 *
 *   concurrent_runs MODEL.onnx HOST_THREADS RUNS_PER_THREAD
 *
 * The model's float32 inputs have one symbolic (or -1) dimension, set to
 * 1..4 by run number; the other dimensions are declared. Prints
 * "concurrent ok THREADS x RUNS runs, SHAPES shapes" or the first mismatch. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "samebits.h"
#include "sha256.h"

#define SHAPES 4

typedef struct {
    sb_session *session;
    int n_in, n_out, runs, index;
    char (*want)[65];
    int failed;
} worker;

static int run_once(sb_session *s, int n_in, int n_out, int batch, char out[65])
{
    sb_tensor_arg in[16] = {0};
    float *data[16] = {0};
    for (int i = 0; i < n_in; ++i) {
        sb_io_info info;
        sb_session_io_info(s, 0, i, &info);
        in[i].dtype = 1, in[i].rank = info.rank;
        int64_t count = 1;
        for (int d = 0; d < info.rank; ++d) {
            in[i].dims[d] = info.dims[d] >= 0 ? info.dims[d] : batch;
            count *= in[i].dims[d];
        }
        data[i] = malloc((size_t)count * 4 + 4);
        sb_fill_test_values(data[i], (size_t)count, (uint32_t)(i + 7 * batch), 3);
        in[i].data = (int64_t)(intptr_t)data[i];
    }
    int64_t idx[16];
    sb_tensor_arg outs[16];
    for (int j = 0; j < n_out; ++j) idx[j] = j;
    sb_run_args a = {0};
    a.inputs = (int64_t)(intptr_t)in, a.output_count = n_out;
    a.output_indices = (int64_t)(intptr_t)idx, a.outputs = (int64_t)(intptr_t)outs;
    a.max_threads = 2;
    int status = sb_session_run(s, &a);
    for (int i = 0; i < n_in; ++i) free(data[i]);
    if (status) {
        fprintf(stderr, "run failed: %s\n", sb_last_error());
        return status;
    }
    sha256_ctx c;
    sha256_init(&c);
    for (int j = 0; j < n_out; ++j) {
        int64_t n = 1;
        for (int d = 0; d < outs[j].rank; ++d) n *= outs[j].dims[d];
        sha256_update(&c, (const void *)(intptr_t)outs[j].data, (size_t)n * 4);
        sb_buffer_free((void *)(intptr_t)outs[j].data);
    }
    sha256_hex(&c, out);
    return 0;
}

static void *work(void *arg)
{
    worker *w = arg;
    for (int r = 0; r < w->runs && !w->failed; ++r) {
        int batch = (w->index + r) % SHAPES + 1;
        char got[65];
        if (run_once(w->session, w->n_in, w->n_out, batch, got) || strcmp(got, w->want[batch - 1])) {
            fprintf(stderr, "thread %d run %d batch %d: digest differs\n", w->index, r, batch);
            w->failed = 1;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: concurrent_runs MODEL.onnx HOST_THREADS RUNS_PER_THREAD\n");
        return 2;
    }
    int nthreads = atoi(argv[2]), runs = atoi(argv[3]);
    FILE *f = fopen(argv[1], "rb");
    if (!f || nthreads < 1 || nthreads > 64 || runs < 1) return 2;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *bytes = malloc((size_t)size);
    if (fread(bytes, 1, (size_t)size, f) != (size_t)size) return 2;
    fclose(f);
    sb_session *s = NULL;
    sb_load_args load = {0};
    load.data = (int64_t)(intptr_t)bytes, load.size = size, load.mode = SB_MODE_EXACT;
    load.path = sb_path_best(), load.max_threads = 2, load.session = (int64_t)(intptr_t)&s;
    if (sb_session_load(&load)) {
        fprintf(stderr, "load failed: %s\n", sb_last_error());
        return 1;
    }
    free(bytes);
    int n_in = sb_session_io_count(s, 0), n_out = sb_session_io_count(s, 1);
    char want[SHAPES][65];
    for (int b = 1; b <= SHAPES; ++b)   /* each shape alone, first */
        if (run_once(s, n_in, n_out, b, want[b - 1])) return 1;
    pthread_t tid[64];
    worker w[64];
    for (int t = 0; t < nthreads; ++t) {
        w[t] = (worker){s, n_in, n_out, runs, t, want, 0};
        pthread_create(&tid[t], NULL, work, &w[t]);
    }
    int failed = 0;
    for (int t = 0; t < nthreads; ++t) {
        pthread_join(tid[t], NULL);
        failed |= w[t].failed;
    }
    printf("plans %d\n", sb_session_plan_count(s));
    sb_session_free(s);
    if (failed) return 1;
    printf("concurrent ok %d x %d runs, %d shapes\n", nthreads, runs, SHAPES);
    return 0;
}
