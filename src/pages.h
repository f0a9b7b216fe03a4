/*
 * pages.h -- memory for resmon's background threads, outside the malloc heap.
 *
 * The first malloc or free on a thread makes glibc give that thread a malloc
 * arena of its own: 64 MiB of address space (VmSize), which a host program
 * running under `ulimit -v` feels as a failed malloc of its own.  What the
 * sampler and GPU threads allocate as a matter of course (the sample ring,
 * the pid list handed to the GPU thread) comes from here instead: whole
 * pages from mmap, which no arena backs.
 */
#ifndef RESMON_PAGES_H
#define RESMON_PAGES_H

#include <stddef.h>

/* Zeroed memory of at least size bytes, or NULL. */
void *rm__pages_alloc(size_t size);

/* Frees what rm__pages_alloc returned (NULL is fine). */
void rm__pages_free(void *block);

#endif
