/*
 * struct_size.h -- structs that grow at their end (resmon.h, "Versioning").
 *
 * A caller compiled against another resmon.h passes structs of another size.
 * These helpers are the one place that decides what the library reads from
 * them and writes into them, following the Linux kernel's rule for extensible
 * syscall structs (copy_struct_from_user: clone3, openat2).
 */
#ifndef RESMON_STRUCT_SIZE_H
#define RESMON_STRUCT_SIZE_H

#include <stddef.h>

/* The smallest size a struct had when it gained struct_size (0.3): the end of
 * its last 0.3 field.  Sizes below it are not a resmon struct. */
#define RM__SIZE_THROUGH(type, last_field) (offsetof(type, last_field) + sizeof(((type *)0)->last_field))

/* The largest struct_size accepted, as clone3 caps its struct at a page: a
 * larger one is garbage (an unset struct_size), and scanning it would read
 * memory the caller never meant to hand over. */
#define RM__STRUCT_SIZE_MAX 4096

/* Copies a caller's struct of src_size bytes into the library's dst of
 * dst_size bytes: a smaller one is zero-extended (its newer fields then mean
 * "default"), a larger one is accepted only when every byte the library does
 * not know is zero.  0, -EINVAL (src_size < min_size) or -E2BIG. */
int rm__copy_struct_in(void *dst, size_t dst_size, const void *src, size_t src_size, size_t min_size);

/* Copies the library's src (src_size bytes) into the caller's dst of dst_size
 * bytes: the common prefix, the rest of a larger dst zeroed.  The caller sets
 * the struct_size field of src to the result's size first (rm__out_size). */
void rm__copy_struct_out(void *dst, size_t dst_size, const void *src, size_t src_size);

static inline size_t rm__out_size(size_t dst_size, size_t src_size)
{
    return dst_size < src_size ? dst_size : src_size;
}

#endif
