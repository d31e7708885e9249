/* The fuzz target of the graph runtime: the reader, the graph load (folding,
 * rewrites, op loads), the planner and a run, on any bytes.
 *
 * libFuzzer calls LLVMFuzzerTestOneInput (make fuzz: clang-19 with
 * -fsanitize=fuzzer,address,undefined). Every input must end in SB_OK or a
 * clean error status with a message: a crash, a sanitizer report, a hang
 * or a leak is a finding. Declared input shapes are run small (an unknown
 * dimension is 2, at most 4096 elements per input) so that a run fits the
 * fuzzer's time per input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "samebits.h"

#define MAX_ELEMENTS 4096

static int dtype_size(int64_t dtype)
{
    switch (dtype) {
    case 1: case 6: case 12: return 4;
    case 7: case 13: return 8;
    case 4: case 5: return 2;
    case 2: case 3: case 9: return 1;
    default: return 0;
    }
}

static void run_small(sb_session *s)
{
    int n_in = sb_session_io_count(s, 0), n_out = sb_session_io_count(s, 1);
    if (n_in > 16 || n_out > 64) return;
    sb_tensor_arg in[16];
    void *data[16] = {0};
    memset(in, 0, sizeof in);
    int ok = 1;
    for (int i = 0; i < n_in && ok; ++i) {
        sb_io_info info;
        if (sb_session_io_info(s, 0, i, &info) || info.rank < 0 || info.rank > 8) { ok = 0; break; }
        int size = dtype_size(info.dtype);
        if (!size) { ok = 0; break; }
        int64_t count = 1;
        in[i].dtype = info.dtype, in[i].rank = info.rank;
        for (int d = 0; d < info.rank; ++d) {
            int64_t dim = info.dims[d] >= 0 ? info.dims[d] : 2;
            if (dim > MAX_ELEMENTS || count * (dim ? dim : 1) > MAX_ELEMENTS) { ok = 0; break; }
            in[i].dims[d] = dim;
            count *= dim;
        }
        if (!ok) break;
        data[i] = calloc((size_t)(count ? count : 1), (size_t)size);
        if (!data[i]) { ok = 0; break; }
        if (info.dtype == 1) sb_fill_test_values(data[i], (size_t)count, (uint32_t)i, 2);
        in[i].data = (int64_t)(intptr_t)data[i];
    }
    if (ok) {
        int64_t idx[64];
        sb_tensor_arg outs[64];
        for (int j = 0; j < n_out; ++j) idx[j] = j;
        sb_run_args a;
        memset(&a, 0, sizeof a);
        a.inputs = (int64_t)(intptr_t)in, a.output_count = n_out;
        a.output_indices = (int64_t)(intptr_t)idx, a.outputs = (int64_t)(intptr_t)outs;
        a.max_threads = 1;
        if (sb_session_run(s, &a) == SB_OK)
            for (int j = 0; j < n_out; ++j) sb_buffer_free((void *)(intptr_t)outs[j].data);
    }
    for (int i = 0; i < 16; ++i) free(data[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int mode = 0; mode < 2; ++mode) {
        sb_session *s = NULL;
        sb_load_args load;
        memset(&load, 0, sizeof load);
        load.data = (int64_t)(intptr_t)data, load.size = (int64_t)size;
        load.mode = mode, load.path = sb_path_best(), load.max_threads = 1;
        load.session = (int64_t)(intptr_t)&s;
        int status = sb_session_load(&load);
        if (status == SB_OK) {
            run_small(s);
            sb_session_free(s);
        } else if (!sb_last_error()[0]) {
            __builtin_trap();   /* every error says what it is */
        }
        if (status == SB_ERR_DECODE) break;   /* the same in both modes */
    }
    return 0;
}
