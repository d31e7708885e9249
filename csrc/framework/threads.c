/* The fixed-chunk thread pool (threads.h).
 *
 * Chunks are handed out through one atomic counter, so which thread runs a
 * chunk is a matter of timing and never of what the chunk computes. Workers
 * are created on first use and then sleep on a condition variable. A caller
 * that finds the pool serving someone else runs its chunks itself. Every
 * thread that runs chunks sets the kernel floating-point environment first. */
#include <stdatomic.h>
#include "samebits.h"
#include "framework/fpenv.h"
#include "framework/threads.h"

#define NS_PER_THREAD 80000.0       /* wake one more thread per 80 us of estimated work */
#define NS_PER_THREAD_WARM 10000.0  /* ... or per 10 us when the workers are spinning */
#define MAX_WORKERS 255

static int threads_by(int max_threads, double est_ns, size_t nchunks, double ns_per_thread)
{
    if (max_threads < 1 || nchunks <= 1 || !sb_threading_available()) return 1;
    double by_work = 1.0 + est_ns / ns_per_thread;
    int n = max_threads;
    if (by_work < n) n = (int)by_work;
    if ((size_t)n > nchunks) n = (int)nchunks;
    if (n > MAX_WORKERS + 1) n = MAX_WORKERS + 1;
    return n < 1 ? 1 : n;
}

int sb_threads_for_work(int max_threads, double est_ns, size_t nchunks)
{
    return threads_by(max_threads, est_ns, nchunks, NS_PER_THREAD);
}

static int workers_spinning(void);

int sb_threads_for_run(int max_threads, double est_ns, size_t nchunks)
{
    int n = threads_by(max_threads, est_ns, nchunks, NS_PER_THREAD);
    const int spinning_now = workers_spinning();
    if (n < max_threads && spinning_now >= 1) {
        /* at most the spinning workers and the caller */
        int warm = threads_by(max_threads, est_ns, nchunks, NS_PER_THREAD_WARM);
        if (warm > spinning_now + 1) warm = spinning_now + 1;
        if (warm > n) n = warm;
    }
    return n;
}

/* Each participant owns a block of consecutive chunks, the same block call
 * after call (participant p of P: chunks [p N / P, (p + 1) N / P)), and runs
 * it first; then it helps with the other blocks, from their front. Chunks
 * of consecutive layers cover the same parts of a map in the same order, so
 * a thread mostly reads what it wrote itself: with one shared counter the
 * claims interleaved and the maps moved between the cores' caches (on a
 * 2-vCPU Zen 5 VM, MobileNetV3's 1x1 16 -> 64 at 112 x 112 took 98-103 us at
 * 2 threads with one counter, 93-94 us with blocks).
 *
 * Within a block a thread claims a run of chunks at a time: 1/GUIDED_SHARE
 * of those left, at least one (OpenMP's guided schedule). One chunk per
 * claim made the threads take turns on neighbouring chunks: every claim
 * moved the counter's cache line between the cores, and chunks whose
 * outputs share cache lines at their ends (a channel-lanes convolution's
 * runs of 56 positions) wrote them from both cores: on a 2-vCPU Zen 4 VM,
 * writing a line the other core holds cost 6-25 ns more (bench/
 * cache_line_handoff.c). At most GUIDED_MAX a claim, so that a thread the
 * system pauses holds back little of the rest (uncapped, YOLOv8n's exact
 * run at 2 threads was 4% slower). Which thread runs a chunk is a matter of
 * timing, never of what the chunk computes. */
#define GUIDED_SHARE 8
#define GUIDED_MAX 32
#define MAX_PARTICIPANTS 256

/* A block's next chunk, alone on its cache line. */
typedef struct {
    _Alignas(64) atomic_size_t next;
} block_counter;

_Static_assert(MAX_PARTICIPANTS >= MAX_WORKERS + 1, "a block for every participant");

/* floor(nchunks p / participants), without the product's overflow */
static size_t block_start(size_t nchunks, int participants, int p)
{
    const size_t n = (size_t)participants;
    return nchunks / n * (size_t)p + nchunks % n * (size_t)p / n;
}

/* The chunks [next, end) of one block, claimed a run at a time. */
static void run_block(atomic_size_t *next, size_t end, sb_chunk_fn fn, void *ctx,
                      int thread_index)
{
    size_t start = atomic_load_explicit(next, memory_order_relaxed);
    for (;;) {
        if (start >= end) break;
        size_t count = (end - start) / GUIDED_SHARE;
        if (count < 1) count = 1;
        if (count > GUIDED_MAX) count = GUIDED_MAX;
        if (!atomic_compare_exchange_weak_explicit(next, &start, start + count,
                                                   memory_order_relaxed, memory_order_relaxed))
            continue;   /* start now holds the counter's value */
        for (size_t chunk = start; chunk < start + count; ++chunk) fn(ctx, chunk, thread_index);
        start = atomic_load_explicit(next, memory_order_relaxed);
    }
}

/* Participant `thread_index` of `participants`: its own block, then the
 * others' (counters[q] starts at block q's first chunk). */
static void run_chunks(block_counter *counters, size_t nchunks, int participants, sb_chunk_fn fn,
                       void *ctx, int thread_index)
{
    sb_fpenv env;
    sb_fpenv_enter(&env);
    for (int i = 0; i < participants; ++i) {
        int q = (thread_index + i) % participants;
        run_block(&counters[q].next, block_start(nchunks, participants, q + 1), fn, ctx,
                  thread_index);
    }
    sb_fpenv_leave(&env);
}

/* Everything by the calling thread. */
static void run_serially(size_t nchunks, sb_chunk_fn fn, void *ctx)
{
    block_counter one;
    atomic_init(&one.next, 0);
    run_chunks(&one, nchunks, 1, fn, ctx, 0);
}

/* Pyodide loads only modules built without threads; Windows builds (untested,
 * CMakeLists.txt) have no pthreads. Both run serially. */
#if (defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)) || defined(_WIN32)
/* Pyodide loads only modules built without threads: everything is serial. */
int sb_threading_available(void) { return 0; }
int sb_cpu_count(void) { return 1; }
static int workers_spinning(void) { return 0; }

/* No threads, nothing to wake (and no clock_gettime, whose timespec layout
 * differs between emscripten versions). */
double sb_threads_wake_ns(int nthreads, int repeats)
{
    (void)nthreads, (void)repeats;
    return 0.0;
}

void sb_parallel_run(int nthreads, size_t nchunks, sb_chunk_fn fn, void *ctx)
{
    (void)nthreads;
    run_serially(nchunks, fn, ctx);
}

#else
#include <pthread.h>
#include <time.h>
#include <sched.h>
#include <unistd.h>

typedef struct {
    sb_chunk_fn fn;
    void *ctx;
    size_t nchunks;
    block_counter next[MAX_PARTICIPANTS];   /* per participant's block */
    int workers_wanted;      /* workers 0 .. workers_wanted-1 take part */
    atomic_int workers_running;  /* participants not yet finished */
} parallel_job;

/* Waking a sleeping thread costs 10-20 us on the machines measured
 * (bench/results/threads-calibration.md), more than a small product. So a
 * worker that finished a job, and a caller waiting for its workers, first
 * spin for a while on an atomic before they sleep: the two jobs of one call
 * (packing, then tiles) and back-to-back calls then skip the sleep. In
 * WebAssembly (the npm package's threaded module) a round has no pause
 * instruction, so it takes a few nanoseconds, and waking a Web Worker costs
 * 30-60 us (Atomics.notify): the spin runs 64 times as many rounds, about
 * as long as natively. */
#if defined(__EMSCRIPTEN__)
#define SPIN_ROUNDS 65536
#else
#define SPIN_ROUNDS 1024
#endif

/* One round of a spin: a pause, and every 64 rounds a yield so that a
 * spinning thread cannot starve the thread it waits for when the cores are
 * oversubscribed. */
static inline void spin_round(int round)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
    if ((round & 63) == 63) sched_yield();
}

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_posted = PTHREAD_COND_INITIALIZER;
static pthread_cond_t job_finished = PTHREAD_COND_INITIALIZER;
static atomic_flag pool_busy = ATOMIC_FLAG_INIT;
static parallel_job job;
static atomic_ulong job_generation;
static atomic_int spinning;   /* workers in their spin after a job */
static int workers_started;
/* The generation each worker was created in: a worker must not miss the job
 * posted right after its creation, before it first took the lock. */
static unsigned long worker_birth_generation[MAX_WORKERS];
static int atfork_registered;

int sb_threading_available(void) { return 1; }

static int workers_spinning(void) { return atomic_load_explicit(&spinning, memory_order_relaxed); }

int sb_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

static void *worker_main(void *arg)
{
    int id = (int)(size_t)arg;
    pthread_mutex_lock(&pool_lock);
    unsigned long seen = worker_birth_generation[id];
    for (;;) {
        if (job_generation == seen) {
            pthread_mutex_unlock(&pool_lock);
            atomic_fetch_add_explicit(&spinning, 1, memory_order_relaxed);
            for (int i = 0; i < SPIN_ROUNDS && atomic_load(&job_generation) == seen; ++i)
                spin_round(i);
            atomic_fetch_sub_explicit(&spinning, 1, memory_order_relaxed);
            pthread_mutex_lock(&pool_lock);
        }
        while (job_generation == seen) pthread_cond_wait(&job_posted, &pool_lock);
        seen = job_generation;
        if (id >= job.workers_wanted) continue;
        const int participants = job.workers_wanted + 1;
        pthread_mutex_unlock(&pool_lock);
        run_chunks(job.next, job.nchunks, participants, job.fn, job.ctx, id + 1);
        pthread_mutex_lock(&pool_lock);
        if (atomic_fetch_sub(&job.workers_running, 1) == 1) pthread_cond_signal(&job_finished);
    }
    return NULL;
}

/* A forked child has none of the parent's workers: start from scratch. */
static void reset_after_fork(void)
{
    pthread_mutex_t fresh_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
    pool_lock = fresh_lock;
    job_posted = fresh_cond;
    job_finished = fresh_cond;
    workers_started = 0;
    atomic_store(&spinning, 0);
    atomic_flag_clear(&pool_busy);
}

/* Called with pool_lock held; returns how many workers exist afterwards. */
static int start_workers(int wanted)
{
    if (!atfork_registered) {
        pthread_atfork(NULL, NULL, reset_after_fork);
        atfork_registered = 1;
    }
    if (wanted > MAX_WORKERS) wanted = MAX_WORKERS;
    while (workers_started < wanted) {
        worker_birth_generation[workers_started] = job_generation;
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &attr, worker_main, (void *)(size_t)workers_started);
        pthread_attr_destroy(&attr);
        if (rc != 0) break;  /* fewer threads only means slower, never different */
        ++workers_started;
    }
    return workers_started;
}

void sb_parallel_run(int nthreads, size_t nchunks, sb_chunk_fn fn, void *ctx)
{
    if (nthreads <= 1 || nchunks <= 1 || atomic_flag_test_and_set(&pool_busy)) {
        run_serially(nchunks, fn, ctx);
        return;
    }
    pthread_mutex_lock(&pool_lock);
    int workers = start_workers(nthreads - 1);
    if (workers > nthreads - 1) workers = nthreads - 1;
    job.fn = fn;
    job.ctx = ctx;
    job.nchunks = nchunks;
    for (int p = 0; p <= workers; ++p)
        atomic_store(&job.next[p].next, block_start(nchunks, workers + 1, p));
    job.workers_wanted = workers;
    atomic_store(&job.workers_running, workers);
    ++job_generation;
    pthread_cond_broadcast(&job_posted);
    pthread_mutex_unlock(&pool_lock);

    run_chunks(job.next, nchunks, workers + 1, fn, ctx, 0);

    for (int i = 0; i < SPIN_ROUNDS && atomic_load(&job.workers_running) > 0; ++i) spin_round(i);
    pthread_mutex_lock(&pool_lock);
    while (atomic_load(&job.workers_running) > 0) pthread_cond_wait(&job_finished, &pool_lock);
    pthread_mutex_unlock(&pool_lock);
    atomic_flag_clear(&pool_busy);
}

static void empty_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)ctx, (void)chunk, (void)thread_index;
}

/* For calibrating NS_PER_THREAD: the cost of one parallel_run over nthreads
 * empty chunks with nthreads threads woken, averaged over `repeats`. */
double sb_threads_wake_ns(int nthreads, int repeats)
{
    struct timespec t0, t1;
    if (repeats < 1) repeats = 1;
    sb_parallel_run(nthreads, (size_t)nthreads, empty_chunk, NULL); /* start the workers */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < repeats; ++i)
        sb_parallel_run(nthreads, (size_t)nthreads, empty_chunk, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / repeats;
}
#endif
