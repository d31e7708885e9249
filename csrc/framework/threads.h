/* The fixed-chunk parallel-for (threads.c). A chunk's work never depends on
 * which thread or how many threads run it; thread_index (0 for the caller,
 * 1.. for workers) only picks a scratch buffer. */
#ifndef SB_THREADS_H
#define SB_THREADS_H

#include <stddef.h>
#include <stdint.h>

typedef void (*sb_chunk_fn)(void *ctx, size_t chunk, int thread_index);

/* A call's thread cap as the pool takes it: at most 1024 (no machine has
 * more cores; the C API accepts any positive int64). */
static inline int sb_thread_cap(int64_t max_threads)
{
    return max_threads > 1024 ? 1024 : (int)max_threads;
}

/* Threads worth waking for est_ns of one thread's work: one per 80 us,
 * at most max_threads and at most nchunks; 1 where there are no threads.
 * A plan's figure (samebits.explain), the same whatever ran before. */
int sb_threads_for_work(int max_threads, double est_ns, size_t nchunks);

/* The threads a run gives the job: sb_threads_for_work's, or more when the
 * pool's workers are still spinning after the job before (a graph's nodes
 * run back to back): handing a job to a spinning worker costs about a
 * microsecond, not the 10-20 us of a wake, so one thread per
 * NS_PER_THREAD_WARM of work is worth it then. A thread count never changes
 * what a chunk computes. */
int sb_threads_for_run(int max_threads, double est_ns, size_t nchunks);

/* Runs fn(ctx, chunk, thread) for every chunk < nchunks on up to nthreads
 * threads (the caller included), each in the kernel floating-point
 * environment. Returns when all are done. */
void sb_parallel_run(int nthreads, size_t nchunks, sb_chunk_fn fn, void *ctx);

#endif
