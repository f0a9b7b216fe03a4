/*
 * pages.c -- memory for resmon's background threads (see pages.h).
 */
#include "pages.h"

#include <stdint.h>
#include <sys/mman.h>

/* Each block starts with its mapped length, so free needs no size. */
typedef union block_header {
    size_t mapped;
    max_align_t align;
} block_header;

void *rm__pages_alloc(size_t size)
{
    if (size > SIZE_MAX - sizeof(block_header))
        return NULL;
    size_t mapped = size + sizeof(block_header);
    block_header *h = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (h == MAP_FAILED)
        return NULL;
    h->mapped = mapped;
    return h + 1;
}

void rm__pages_free(void *block)
{
    if (!block)
        return;
    block_header *h = (block_header *)block - 1;
    munmap(h, h->mapped);
}
