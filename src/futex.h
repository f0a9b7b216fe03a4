/*
 * futex.h -- sleeping on a word until a deadline or a wake-up.
 *
 * The sampler and the GPU thread sleep in futex(FUTEX_WAIT_BITSET) with an
 * absolute CLOCK_MONOTONIC deadline: the schedule never drifts, a wake-up
 * costs no more than the kernel's own, and another thread ends the sleep at
 * once by changing the word and calling rm__futex_wake.  (A condition
 * variable added a mutex round trip and several atomics per wake-up,
 * measurable at 1 kHz.)
 */
#ifndef RESMON_FUTEX_H
#define RESMON_FUTEX_H

#include <stdatomic.h>
#include <stdint.h>

/* Sleeps while *word == expected, until deadline_ns on CLOCK_MONOTONIC
 * (0: no deadline).  Returns 1 when the deadline passed, 0 when the word
 * changed or a wake-up came (callers re-check their condition). */
int rm__futex_wait_until(atomic_int *word, int expected, uint64_t deadline_ns);

/* Wakes every thread sleeping on word. */
void rm__futex_wake(atomic_int *word);

#endif
