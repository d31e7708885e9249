/* The matrix product's public entry points: sb_matmul (one product or a
 * batch with broadcasting), its plan, and the packed-B API. They check the
 * arguments, describe the call to the planner and hand the products to the
 * driver. */
#include <string.h>
#include "samebits.h"
#include "framework/checked.h"
#include "framework/epilogue.h"
#include "framework/driver.h"
#include "framework/step.h"
#include "kernels/prepared.h"

/* A batch after its dimensions of extent 1 are dropped and those that stack
 * whole products along the rows of A and C are folded into m. */
typedef struct {
    size_t ndim;
    int64_t shape[SB_MAX_BATCH_DIMS];
    int64_t a_stride[SB_MAX_BATCH_DIMS], b_stride[SB_MAX_BATCH_DIMS], c_stride[SB_MAX_BATCH_DIMS];
    size_t count;                 /* products */
} batch_layout;

typedef struct {
    const sb_isa *isa;
    size_t m, n, k;
    const float *a, *b, *bias;
    float *c;
    ptrdiff_t a_row, a_col, b_row, b_col, c_row;
    int packed, mode, max_threads;
    int64_t activation;         /* as sb_matmul_args.activation */
    batch_layout batch;
} matmul_call;

static int in_range(int64_t v)
{
    return v >= 0 && v <= SB_MAX_SIZE && (uint64_t)v <= (uint64_t)SIZE_MAX;
}

/* |stride| * (extent - 1) stays below 2^62, so offsets cannot overflow. */
static int stride_ok(int64_t stride, int64_t extent)
{
    const int64_t limit = (int64_t)1 << 62;
    if (stride < -limit || stride > limit || stride < -(int64_t)PTRDIFF_MAX ||
        stride > (int64_t)PTRDIFF_MAX)
        return 0;
    int64_t magnitude = stride < 0 ? -stride : stride;
    return extent <= 1 || magnitude <= limit / (extent - 1);
}

static int read_batch(const sb_batch *in, matmul_call *call)
{
    batch_layout *out = &call->batch;
    memset(out, 0, sizeof *out);
    out->count = 1;
    if (!in) return SB_OK;
    if (in->ndim < 0 || in->ndim > SB_MAX_BATCH_DIMS) return SB_ERR_ARGUMENT;
    for (int64_t d = 0; d < in->ndim; ++d) {
        if (!in_range(in->shape[d]) || !stride_ok(in->a_stride[d], in->shape[d]) ||
            !stride_ok(in->b_stride[d], in->shape[d]) || !stride_ok(in->c_stride[d], in->shape[d]))
            return SB_ERR_ARGUMENT;
        if (call->packed && in->b_stride[d] != 0 && in->shape[d] > 1) return SB_ERR_ARGUMENT;
        if (in->shape[d] == 1) continue;   /* contributes no offset */
        size_t i = out->ndim++;
        out->shape[i] = in->shape[d];
        out->a_stride[i] = in->a_stride[d], out->b_stride[i] = in->b_stride[d];
        out->c_stride[i] = in->c_stride[d];
        if (!sb_mul_ok(out->count, (size_t)in->shape[d], &out->count)) return SB_ERR_ARGUMENT;
    }
    /* Innermost dimensions that repeat A and C row blocks over one B: one
     * taller product (the same outputs, each with the same bits), B packed
     * once for all of them. */
    while (out->ndim > 0 && out->count > 0) {
        size_t d = out->ndim - 1;
        int64_t rows = (int64_t)call->m;
        if (out->b_stride[d] != 0 || call->m == 0 ||
            out->a_stride[d] != rows * (int64_t)call->a_row ||
            out->c_stride[d] != rows * (int64_t)call->c_row)
            break;
        size_t folded;
        if (!sb_mul_ok(call->m, (size_t)out->shape[d], &folded) || (uint64_t)folded > (uint64_t)SB_MAX_SIZE)
            break;
        call->m = folded;
        out->count /= (size_t)out->shape[d];
        out->ndim = d;
    }
    return SB_OK;
}

static int read_call(const sb_matmul_args *args, matmul_call *call)
{
    memset(call, 0, sizeof *call);
    if (!args) return SB_ERR_ARGUMENT;
    if (args->mode != SB_MODE_FAST && args->mode != SB_MODE_EXACT) return SB_ERR_ARGUMENT;
    if (args->max_threads < 1) return SB_ERR_ARGUMENT;
    if (!sb_activation_valid(args->activation)) return SB_ERR_ARGUMENT;
    if (args->path < 0 || args->path >= sb_path_count()) return SB_ERR_ARGUMENT;
    call->isa = sb_isa_supported((int)args->path);
    if (!call->isa) return SB_ERR_PATH;
    if (!in_range(args->m) || !in_range(args->n) || !in_range(args->k)) return SB_ERR_ARGUMENT;
    call->m = (size_t)args->m, call->n = (size_t)args->n, call->k = (size_t)args->k;
    call->mode = (int)args->mode, call->activation = args->activation;
    call->max_threads = sb_thread_cap(args->max_threads);
    call->packed = args->b_packed != 0;
    call->a = (const float *)(intptr_t)args->a;
    call->b = (const float *)(intptr_t)args->b;
    call->c = (float *)(intptr_t)args->c;
    call->bias = (const float *)(intptr_t)args->bias;
    if (!stride_ok(args->a_row, args->m) || !stride_ok(args->a_col, args->k) ||
        !stride_ok(args->b_row, args->k) || !stride_ok(args->b_col, args->n) ||
        !stride_ok(args->c_row, args->m))
        return SB_ERR_ARGUMENT;
    call->a_row = (ptrdiff_t)args->a_row, call->a_col = (ptrdiff_t)args->a_col;
    call->b_row = (ptrdiff_t)args->b_row, call->b_col = (ptrdiff_t)args->b_col;
    call->c_row = (ptrdiff_t)args->c_row;
    return read_batch((const sb_batch *)(intptr_t)args->batch, call);
}

/* Every operand the call reads or writes is there. */
static int pointers_ok(const matmul_call *call)
{
    int outputs = call->m && call->n && call->batch.count;
    if (outputs && !call->c) return 0;
    if (outputs && call->k && (!call->a || !call->b)) return 0;
    return 1;
}

/* Product i's memory: its batch index in C order gives the offsets. */
static void product_operands(const void *ctx, size_t i, sb_operands *ops)
{
    const matmul_call *call = ctx;
    ptrdiff_t a_off = 0, b_off = 0, c_off = 0;
    for (size_t d = call->batch.ndim; d-- > 0;) {
        size_t extent = (size_t)call->batch.shape[d], index = i % extent;
        i /= extent;
        a_off += (ptrdiff_t)index * (ptrdiff_t)call->batch.a_stride[d];
        b_off += (ptrdiff_t)index * (ptrdiff_t)call->batch.b_stride[d];
        c_off += (ptrdiff_t)index * (ptrdiff_t)call->batch.c_stride[d];
    }
    memset(ops, 0, sizeof *ops);
    ops->a = call->a ? call->a + a_off : NULL;
    ops->a_row = call->a_row, ops->a_col = call->a_col;
    if (call->packed) {
        ops->packed_b = call->b;
    } else {
        ops->b = call->b ? call->b + b_off : NULL;
        ops->b_row = call->b_row, ops->b_col = call->b_col;
    }
    ops->c = call->c ? call->c + c_off : NULL;
    ops->ldc = call->c_row;
    ops->col_bias = call->bias;
}

/* The products' run over a planned call. */
static void bind_run(const matmul_call *call, const sb_product_plan *plan, sb_product_run *run)
{
    memset(run, 0, sizeof *run);
    run->plan = plan;
    run->activation = call->activation;
    run->max_threads = call->max_threads;
    run->operands = product_operands;
    run->operands_ctx = call;
}

static int plan_call(const matmul_call *call, sb_product_plan *plan, sb_product_run *run)
{
    sb_product_desc desc = {0};
    desc.m = call->m, desc.n = call->n, desc.k = call->k;
    desc.a_row = call->a_row, desc.a_col = call->a_col;
    desc.b_row = call->b_row, desc.b_col = call->b_col;
    desc.b_form = call->packed ? SB_B_PACKED : SB_B_MATRIX;
    desc.count = call->batch.count;
    int status = sb_plan_product(call->isa->gemm, call->mode, &desc, plan);
    if (status != SB_OK) return status;
    if (call->batch.count == 0) plan->route = SB_ROUTE_EMPTY;
    bind_run(call, plan, run);
    return SB_OK;
}

int sb_matmul(const sb_matmul_args *args)
{
    matmul_call call;
    int status = read_call(args, &call);
    if (status != SB_OK) return status;
    if (!pointers_ok(&call)) return SB_ERR_ARGUMENT;
    sb_product_plan plan;
    sb_product_run run;
    status = plan_call(&call, &plan, &run);
    return status == SB_OK ? sb_run_products(&run) : status;
}

/* ---- a call prepared once, run many times (kernels/prepared.h) -------------- */

struct sb_matmul_call {
    matmul_call call;             /* read and checked; its pointers given per run */
    sb_product_plan plan;
};

size_t sb_matmul_call_bytes(void) { return sizeof(sb_matmul_call); }

int sb_matmul_prepare(const sb_matmul_args *args, sb_matmul_call *p)
{
    memset(p, 0, sizeof *p);
    int status = read_call(args, &p->call);
    if (status != SB_OK) return status;
    p->call.a = p->call.b = p->call.bias = NULL, p->call.c = NULL;
    sb_product_run unused;
    return plan_call(&p->call, &p->plan, &unused);
}

int sb_matmul_run_prepared(const sb_matmul_call *p, const float *a, const float *b,
                           const float *bias, float *c, int max_threads)
{
    matmul_call call = p->call;   /* this run's operands */
    call.a = a, call.b = b, call.bias = bias, call.c = c;
    call.max_threads = sb_thread_cap(max_threads);
    if (!pointers_ok(&call)) return SB_ERR_ARGUMENT;
    sb_product_run run;
    bind_run(&call, &p->plan, &run);
    return sb_run_products(&run);
}

int sb_matmul_plan(const sb_matmul_args *args, sb_plan_info *info)
{
    if (!info) return SB_ERR_ARGUMENT;
    matmul_call call;
    int status = read_call(args, &call);
    if (status != SB_OK) return status;
    if (!pointers_ok(&call)) return SB_ERR_ARGUMENT;
    sb_product_plan plan;
    sb_product_run run;
    status = plan_call(&call, &plan, &run);
    if (status == SB_OK) sb_describe_products(&run, (int)args->path, info);
    return status;
}

static int run_2d(int path, int mode, int max_threads, size_t m, size_t n, size_t k,
                  const float *a, ptrdiff_t a_row, ptrdiff_t a_col, const float *b,
                  ptrdiff_t b_row, ptrdiff_t b_col, int packed, float *c, ptrdiff_t ldc)
{
    if ((uint64_t)m > (uint64_t)SB_MAX_SIZE || (uint64_t)n > (uint64_t)SB_MAX_SIZE ||
        (uint64_t)k > (uint64_t)SB_MAX_SIZE)
        return SB_ERR_ARGUMENT;
    sb_matmul_args args = {0};
    args.path = path, args.mode = mode, args.max_threads = max_threads;
    args.m = (int64_t)m, args.n = (int64_t)n, args.k = (int64_t)k;
    args.a = (int64_t)(intptr_t)a, args.a_row = a_row, args.a_col = a_col;
    args.b = (int64_t)(intptr_t)b, args.b_row = b_row, args.b_col = b_col, args.b_packed = packed;
    args.c = (int64_t)(intptr_t)c, args.c_row = ldc;
    return sb_matmul(&args);
}

int sb_sgemm(int path, int mode, int max_threads, size_t m, size_t n, size_t k,
             const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
             const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
             float *c, ptrdiff_t ldc)
{
    return run_2d(path, mode, max_threads, m, n, k, a, a_row, a_col, b, b_row, b_col, 0, c, ldc);
}

int sb_sgemm_packed(int path, int mode, int max_threads, size_t m, size_t n, size_t k,
                    const float *a, ptrdiff_t a_row, ptrdiff_t a_col, const void *packed_b,
                    float *c, ptrdiff_t ldc)
{
    return run_2d(path, mode, max_threads, m, n, k, a, a_row, a_col, packed_b, 0, 0, 1, c, ldc);
}

/* ---- packed B ------------------------------------------------------------ */

static const sb_tile *packing_tile(const sb_isa *isa)
{
    return isa->gemm->product_tile[SB_MODE_FAST];
}

size_t sb_packed_b_bytes(int path, size_t k, size_t n)
{
    const sb_isa *isa = sb_isa_get(path);
    size_t floats, bytes;
    if (!isa || !sb_path_built(path) ||
        !sb_packed_b_floats(isa->gemm, packing_tile(isa), k, n, &floats) ||
        !sb_mul_ok(floats, sizeof(float), &bytes))
        return 0;
    return bytes;
}

typedef struct {
    const sb_isa *isa;
    const float *b;
    ptrdiff_t b_row, b_col;
    size_t k, n, strips;
    float *packed;
} pack_job;

static void pack_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const pack_job *job = ctx;
    const sb_tile *tile = packing_tile(job->isa);
    const size_t nr = (size_t)tile->nr, groups = sb_ceil_div(job->strips, SB_PACK_STRIPS);
    const size_t kb = chunk / groups, strip0 = chunk % groups * SB_PACK_STRIPS;
    const size_t kc = sb_min_size(job->k - kb * SB_KC, SB_KC);
    tile->pack_b(tile, job->b, job->b_row, job->b_col, job->n, kb * SB_KC, kc, strip0,
                 sb_min_size(strip0 + SB_PACK_STRIPS, job->strips),
                 job->packed + kb * SB_KC * job->strips * nr + strip0 * kc * nr);
}

int sb_pack_b(int path, int max_threads, size_t k, size_t n, const float *b, ptrdiff_t b_row,
              ptrdiff_t b_col, void *packed, size_t packed_size)
{
    if (max_threads < 1) return SB_ERR_ARGUMENT;
    const sb_isa *isa = sb_isa_supported(path);
    if (!isa) return SB_ERR_PATH;
    if ((uint64_t)k > (uint64_t)SB_MAX_SIZE || (uint64_t)n > (uint64_t)SB_MAX_SIZE)
        return SB_ERR_ARGUMENT;
    size_t bytes = sb_packed_b_bytes(path, k, n);
    if (bytes == 0 && k && n) return SB_ERR_NO_MEMORY;
    if (packed_size < bytes) return SB_ERR_ARGUMENT;
    if (k == 0 || n == 0) return SB_OK;
    if (!b || !packed) return SB_ERR_ARGUMENT;
    const sb_tile *tile = packing_tile(isa);
    pack_job job = {isa, b, b_row, b_col, k, n, sb_packed_b_strips(isa->gemm, tile, n), packed};
    /* one unit: a k-block of a group of SB_PACK_STRIPS strips */
    size_t units = sb_ceil_div(k, SB_KC) * sb_ceil_div(job.strips, SB_PACK_STRIPS);
    double ns = (double)k * (double)job.strips * (double)tile->nr * SB_COST_PACK;
    sb_step_plan plan = sb_plan_step(units, 1, ns);
    sb_run_step(&plan, max_threads, pack_chunk, &job);
    return SB_OK;
}
