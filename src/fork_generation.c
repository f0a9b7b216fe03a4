/*
 * fork_generation.c -- a counter that a fork increments in the child (see
 * fork_generation.h).
 */
#include "fork_generation.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_uint generation;
static pthread_once_t registered = PTHREAD_ONCE_INIT;

/* In the child, single-threaded: the copy of the counter is the child's. */
static void forked_child(void)
{
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
}

static void register_handler(void)
{
    /* Fails only without memory for the handler; then every process reads
     * generation 0 and the pid check the callers make is what is left. */
    (void)pthread_atfork(NULL, NULL, forked_child);
}

unsigned rm__fork_generation(void)
{
    pthread_once(&registered, register_handler);
    return atomic_load_explicit(&generation, memory_order_relaxed);
}
