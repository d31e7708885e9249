/* sb_copy: the data movement a graph needs, as one strided copy: y (dense,
 * C order, shape[ndim]) = x read at element strides (any sign, 0 to repeat).
 * Transposes, permutes, slices and broadcasts are strides; concatenation,
 * splitting, padding and gathering are copies into or out of parts of a
 * tensor (py/samebits/_ops/movement.py). Values move untouched: the bits are
 * the input's (NaN payloads included). Threads take whole output rows; a
 * transpose (the output's rows read across the input, its next dimension
 * along it) takes tiles of TILE_ROWS rows, each read a line of the input at
 * a time (transposed_tile). */
#include <stdint.h>
#include <string.h>
#include "samebits.h"
#include "framework/checked.h"
#include "framework/step.h"
#include "kernels/strided_rows.h"
#include "kernels/copy.h"
#include "framework/transpose.h"

/* Output rows per tile of the transposing route: 16 floats are a cache line
 * of the input column they come from. */
#define TILE_ROWS 16

typedef struct {
    const sb_copy_args *a;
    size_t rows, cols;
    size_t along, tiles;          /* transposing route: rows along the next dimension, tiles of them */
    int through_block;            /* ... its tiles' rows would share cache sets */
    sb_step_plan plan;            /* units: output rows (transposing: tiles) */
} copy_job;

/* Output columns per pass of a tile whose rows would share cache sets: its
 * rows are then written through a block of TILE_ROWS x TILE_COLS in
 * scratch, whole lines at a time. Written straight, 16 output rows 8 KiB
 * apart (a (2048, 64) -> (64, 2048) transpose) filled 16 bytes at a time 16
 * lines of one first-level set, more than it has ways: 74 us where the
 * straight (512, 256) one took 20 (which the block slows to 26-37). */
#define TILE_COLS 64
#define SET_SPAN 4096          /* bytes after which the first-level sets repeat (48 KiB, 12 ways) */
#define SET_WAYS_SAFE 8        /* rows of a tile in one set that still leave room */

/* Whether TILE_ROWS output rows of `cols` words would put more than
 * SET_WAYS_SAFE of their lines in one first-level set. */
static int rows_share_sets(size_t cols)
{
    unsigned char count[SET_SPAN / 64] = {0};
    const size_t stride = cols * sizeof(uint32_t) % SET_SPAN;
    for (size_t i = 0; i < TILE_ROWS; ++i)
        if (++count[i * stride % SET_SPAN / 64] > SET_WAYS_SAFE) return 1;
    return 0;
}

/* dst[i * dst_step + c] = src[c * step + i] for i < g, c < cols: the vector
 * path's 4 x 4 shuffles on whole blocks (moves of the bits, like memcpy's),
 * the rest word by word. */
static void transpose_words(uint32_t *dst, size_t dst_step, const uint32_t *src, ptrdiff_t step,
                            size_t g, size_t cols)
{
    size_t c4 = 0, g4 = 0;
#if VEC4_AVAILABLE
    c4 = cols / 4 * 4, g4 = g / 4 * 4;
    if (c4 && g4) sb_transpose_copy((float *)dst, dst_step, (const float *)src, step, c4, g4);
#endif
    for (size_t i = 0; i < g; ++i)
        for (size_t c = i < g4 ? c4 : 0; c < cols; ++c)
            dst[i * dst_step + c] = src[(ptrdiff_t)c * step + (ptrdiff_t)i];
}

/* dst[i * cols + c] = src[c * step + i] for i < g <= TILE_ROWS, c < cols;
 * through_block: by blocks of TILE_COLS columns (rows_share_sets). */
static void transposed_tile(uint32_t *dst, size_t cols, const uint32_t *src, ptrdiff_t step,
                            size_t g, int through_block)
{
    if (!through_block) {
        transpose_words(dst, cols, src, step, g, cols);
        return;
    }
    uint32_t block[TILE_ROWS * TILE_COLS];
    for (size_t c0 = 0; c0 < cols; c0 += TILE_COLS) {
        const size_t n = cols - c0 < TILE_COLS ? cols - c0 : TILE_COLS;
        transpose_words(block, TILE_COLS, src + (ptrdiff_t)c0 * step, step, g, n);
        for (size_t i = 0; i < g; ++i) memcpy(dst + i * cols + c0, block + i * TILE_COLS, n * sizeof *dst);
    }
}

static void transpose_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const copy_job *job = (const copy_job *)ctx;
    const sb_copy_args *a = job->a;
    const uint32_t *x = (const uint32_t *)(intptr_t)a->x;
    uint32_t *y = (uint32_t *)(intptr_t)a->y;
    const ptrdiff_t xs = (ptrdiff_t)a->x_stride[a->ndim - 1];
    size_t u0, u_end;
    sb_step_units(&job->plan, chunk, &u0, &u_end);
    for (size_t u = u0; u < u_end; ++u) {
        const size_t first = u / job->tiles * job->along + u % job->tiles * TILE_ROWS;
        const size_t g = job->along - u % job->tiles * TILE_ROWS < TILE_ROWS
                             ? job->along - u % job->tiles * TILE_ROWS : TILE_ROWS;
        ptrdiff_t ox, oy;
        sb_row_offsets(first, (int)a->ndim, a->shape, a->x_stride, a->y_stride, &ox, &oy);
        transposed_tile(y + oy, job->cols, x + ox, xs, g, job->through_block);
    }
}

static void copy_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const copy_job *job = (const copy_job *)ctx;
    const sb_copy_args *a = job->a;
    const uint32_t *x = (const uint32_t *)(intptr_t)a->x;     /* bits, not values */
    uint32_t *y = (uint32_t *)(intptr_t)a->y;
    int last = (int)a->ndim - 1;
    ptrdiff_t xs = (ptrdiff_t)a->x_stride[last], ys = (ptrdiff_t)a->y_stride[last];
    size_t row0, row_end;
    sb_step_units(&job->plan, chunk, &row0, &row_end);
    for (size_t row = row0; row < row_end; ++row) {
        ptrdiff_t ox, oy;
        sb_row_offsets(row, (int)a->ndim, a->shape, a->x_stride, a->y_stride, &ox, &oy);
        const uint32_t *src = x + ox;
        uint32_t *dst = y + oy;
        if (xs == 1 && ys == 1) memcpy(dst, src, job->cols * sizeof *dst);
        else for (size_t j = 0; j < job->cols; ++j) dst[(ptrdiff_t)j * ys] = src[(ptrdiff_t)j * xs];
    }
}

int sb_copy(const sb_copy_args *a)
{
    if (!a || a->max_threads < 1 || a->ndim < 1 || a->ndim > SB_MAX_BATCH_DIMS)
        return SB_ERR_ARGUMENT;
    size_t total = 1;
    for (int64_t d = 0; d < a->ndim; ++d) {
        if (a->shape[d] < 0 || a->shape[d] > SB_MAX_SIZE) return SB_ERR_ARGUMENT;
        if (a->x_stride[d] < -(SB_MAX_SIZE << 20) || a->x_stride[d] > (SB_MAX_SIZE << 20) ||
            a->y_stride[d] < 0 || a->y_stride[d] > (SB_MAX_SIZE << 20))
            return SB_ERR_ARGUMENT;
        if (!sb_mul_ok(total, (size_t)a->shape[d], &total) || total > SIZE_MAX / 4)
            return SB_ERR_ARGUMENT;
    }
    if (total == 0) return SB_OK;
    if (!a->x || !a->y) return SB_ERR_ARGUMENT;
    size_t cols = (size_t)a->shape[a->ndim - 1];
    copy_job job = {.a = a, .cols = cols, .rows = total / cols};
    const int64_t last = a->ndim - 1;
    if (a->ndim >= 2 && a->y_stride[last] == 1 && a->x_stride[last] != 1 &&
        a->x_stride[last - 1] == 1 && a->y_stride[last - 1] == (int64_t)cols &&
        a->shape[last - 1] > 1 && cols >= 4) {
        /* output rows read across the input, consecutive rows along it */
        job.along = (size_t)a->shape[last - 1];
        job.tiles = (job.along + TILE_ROWS - 1) / TILE_ROWS;
        job.through_block = rows_share_sets(cols);
        job.plan = sb_plan_step(job.rows / job.along * job.tiles,
                                sb_units_per_chunk(TILE_ROWS * cols, SB_STEP_CHUNK_ITEMS),
                                (double)total * SB_COST_MOVE);
        sb_run_step(&job.plan, a->max_threads, transpose_chunk, &job);
        return SB_OK;
    }
    job.plan = sb_plan_step(job.rows, sb_units_per_chunk(cols, SB_STEP_CHUNK_ITEMS),
                            (double)total * SB_COST_MOVE);
    sb_run_step(&job.plan, a->max_threads, copy_chunk, &job);
    return SB_OK;
}

int sb_copy_words(int threads, int rank, const int64_t *shape, const void *x, const int64_t *x_strides,
                  void *y, const int64_t *y_strides)
{
    if (rank < 1 || rank > SB_MAX_BATCH_DIMS) return SB_ERR_ARGUMENT;
    sb_copy_args args;
    memset(&args, 0, sizeof args);
    args.ndim = rank;
    for (int d = 0; d < rank; ++d)
        args.shape[d] = shape[d], args.x_stride[d] = x_strides[d], args.y_stride[d] = y_strides[d];
    args.x = (int64_t)(intptr_t)x, args.y = (int64_t)(intptr_t)y;
    args.max_threads = threads;
    return sb_copy(&args);
}
