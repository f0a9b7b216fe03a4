/*
 * gpu_poller.h -- reading the GPU on its own thread, off the sampling path.
 *
 * GPU calls can be slow (NVML's process queries take milliseconds; a call
 * has been seen to hang for hours), so a monitor with a GPU profiler reads it
 * on a second thread, "resmon-gpu", on its own schedule.  Each CPU/RSS sample
 * takes the freshest GPU reading; a reading older than 1.5 GPU intervals
 * (the GPU is late or hung) is not attached, and those fields are NAN.  CPU
 * and RSS sampling never waits for the GPU.
 *
 * One poller belongs to one monitor for the monitor's whole life, and so does
 * its thread once started: windows open and close it, and between windows it
 * sleeps.  So at most one profiler call per monitor is ever in flight, also
 * when a call from the previous window still hangs as the next one opens.
 * The poller holds the profiler (its copied table, retain/release) and
 * decides when the last call has returned: see resmon.h, "Lifetime".
 *
 * The GPU thread never calls malloc or free itself (see pages.h): the
 * buffers it uses come and go on the monitor's other threads.  A profiler
 * that allocates (NVML does, a Python profiler does) still costs the thread
 * an arena; README says how to bound that (MALLOC_ARENA_MAX).
 */
#ifndef RESMON_GPU_POLLER_H
#define RESMON_GPU_POLLER_H

#include "resmon.h"

#include <stdint.h>

typedef struct rm__gpu_poller rm__gpu_poller;

/* Copies the profiler table (table_size bytes, validated by the caller) and
 * calls its retain.  caller_table: the pointer the caller passed in
 * resmon_options.gpu_profiler; when it is the address of an open
 * resmon_gpu's own table, that resmon_gpu is read whole (rm__gpu_of_table,
 * resolved here once).  No thread yet.  With adaptive (the caller left the
 * GPU interval at its default), interval_ns is a floor: the thread stretches
 * the interval to twice the slowest recent reading (see adapt_interval).  0
 * or -ENOMEM (then nothing is retained). */
int rm__gpu_poller_new(rm__gpu_poller **out, const resmon_gpu_profiler *table, const resmon_gpu_profiler *caller_table,
                       uint64_t interval_ns, int adaptive);

/* Starts the GPU thread if it has none yet, with the calling thread's signal
 * mask.  Called from the owner's thread, not the sampler's: creating a thread
 * allocates its TLS with malloc, which would cost the sampler an arena (see
 * pages.h).  0 or a negative errno. */
int rm__gpu_poller_start_thread(rm__gpu_poller *p);

/* Opens a window and asks for a reading at once, for the processes pids.
 * 0, or -EAGAIN when the thread could not be started (the window then has no
 * GPU readings). */
int rm__gpu_poller_begin(rm__gpu_poller *p, const pid_t *pids, size_t pid_count);

/* Waits up to timeout_ns for the window's first reading (so a window's first
 * sample has GPU values when the GPU answers promptly). */
void rm__gpu_poller_wait_first(rm__gpu_poller *p, uint64_t timeout_ns);

/* Whether the profiler reads process GPU memory (so pids matter). */
int rm__gpu_poller_wants_pids(const rm__gpu_poller *p);

/* The processes whose GPU memory to read (copied). */
void rm__gpu_poller_set_pids(rm__gpu_poller *p, const pid_t *pids, size_t count);

/* Fills s's GPU fields and *energy_j from the freshest reading of this window
 * at now_ns, or NAN when there is none or it is stale. */
void rm__gpu_poller_latest(rm__gpu_poller *p, uint64_t now_ns, resmon_sample *s, double *energy_j);

/* Closes the window: asks for a last reading and waits up to timeout_ns for
 * it; the thread then sleeps until the next window.  The latest reading stays
 * readable. */
void rm__gpu_poller_end(rm__gpu_poller *p, uint64_t timeout_ns);

/* Ends the thread and lets go of the profiler, as resmon.h's "Lifetime"
 * describes: with a release hook, waits at most bounded_wait_ns for a call
 * in flight; without one, as long as the call takes.  Accepts NULL. */
void rm__gpu_poller_free(rm__gpu_poller *p, uint64_t bounded_wait_ns);

#endif
