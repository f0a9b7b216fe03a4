/*
 * struct_size.c -- structs that grow at their end (see struct_size.h).
 */
#include "struct_size.h"

#include <errno.h>
#include <string.h>

int rm__copy_struct_in(void *dst, size_t dst_size, const void *src, size_t src_size, size_t min_size)
{
    if (!src || src_size < min_size)
        return -EINVAL;
    if (src_size > RM__STRUCT_SIZE_MAX)
        return -E2BIG; /* not a struct any resmon.h will have: refuse before reading it */
    if (src_size > dst_size) {
        const unsigned char *tail = (const unsigned char *)src + dst_size;
        for (size_t i = 0; i < src_size - dst_size; i++)
            if (tail[i])
                return -E2BIG; /* a field of a newer resmon.h is set: refuse rather than ignore it */
        src_size = dst_size;
    }
    memcpy(dst, src, src_size);
    memset((unsigned char *)dst + src_size, 0, dst_size - src_size);
    return 0;
}

void rm__copy_struct_out(void *dst, size_t dst_size, const void *src, size_t src_size)
{
    size_t common = dst_size < src_size ? dst_size : src_size;
    memcpy(dst, src, common);
    if (dst_size > common)
        memset((unsigned char *)dst + common, 0, dst_size - common);
}
