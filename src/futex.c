/*
 * futex.c -- sleeping on a word until a deadline or a wake-up (see futex.h).
 */
#include "futex.h"
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

int rm__futex_wait_until(atomic_int *word, int expected, uint64_t deadline_ns)
{
    struct timespec deadline = rm__timespec_from_ns(deadline_ns);
    /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time (without
     * FUTEX_CLOCK_REALTIME); it returns at once if the word no longer holds
     * expected. */
    long rc = syscall(SYS_futex, word, FUTEX_WAIT_BITSET_PRIVATE, expected, deadline_ns ? &deadline : NULL, NULL,
                      FUTEX_BITSET_MATCH_ANY);
    return rc < 0 && errno == ETIMEDOUT;
}

void rm__futex_wake(atomic_int *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
