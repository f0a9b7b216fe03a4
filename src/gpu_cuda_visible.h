/*
 * gpu_cuda_visible.h -- the grammar of CUDA_VISIBLE_DEVICES, apart from any
 * GPU library.
 *
 * The value is a comma-separated list; each entry is one of
 *   N                     a CUDA index: its leading decimal digits, read as
 *                         strtoul reads them ("1gpu2" is 1, "0-2" is 0: there
 *                         are no ranges), after spaces or tabs
 *   GPU-<uuid>            a GPU by UUID, or by a prefix unique on the node
 *   MIG-<uuid>            a MIG instance by UUID
 *   MIG-GPU-<uuid>/G/C    the older form: instance G/C of that GPU
 * and CUDA sees the devices named before the first entry that names none:
 * "", "-1", "NoDevFiles" and "GPU-" alone name nothing, so "0,2,-1,1" is
 * devices 0 and 2.  An entry that names a device already listed leaves CUDA
 * with no device at all.  (The CUDA programming guide's "CUDA Environment
 * Variables" for the list, invalid entries and UUID prefixes; PyTorch's
 * torch.cuda._parse_visible_devices, checked against the driver, for the
 * strtoul reading and repeats.)
 *
 * What each entry resolves to is asked through rm__cuda_query, so the
 * grammar is tested against a table of devices, and NVML answers it for real
 * (gpu_nvml.c).
 */
#ifndef RESMON_GPU_CUDA_VISIBLE_H
#define RESMON_GPU_CUDA_VISIBLE_H

#include <stddef.h>

/* Room for a device UUID as NVML spells it (GPU-... or MIG-...). */
#define RM__CUDA_UUID_MAX 96

/* One entry, parsed. */
typedef struct rm__cuda_entry {
    enum { RM__CUDA_INDEX, RM__CUDA_UUID, RM__CUDA_MIG_INSTANCE } kind;
    unsigned index;                 /* RM__CUDA_INDEX */
    char uuid[RM__CUDA_UUID_MAX];   /* RM__CUDA_UUID: the entry (GPU-, perhaps a prefix, or MIG-);
                                       RM__CUDA_MIG_INSTANCE: the GPU's GPU-<uuid> */
    unsigned gpu_instance, compute_instance; /* RM__CUDA_MIG_INSTANCE */
} rm__cuda_entry;

/* Parses one entry (len bytes at text, without its comma): 0, or -EINVAL
 * when it names no device whatever the node holds. */
int rm__cuda_parse_entry(const char *text, size_t len, rm__cuda_entry *out);

/* What the grammar needs to know about the node: the UUID of the device an
 * entry names.  0 with uuid filled; -ENOENT when it names no device (the list
 * ends there); any other negative errno stops the resolution and is returned
 * (the query's own message, if any, is its business). */
typedef struct rm__cuda_query {
    void *ctx;
    int (*resolve)(void *ctx, const rm__cuda_entry *entry, char uuid[RM__CUDA_UUID_MAX]);
} rm__cuda_query;

/* Resolves value as the CUDA runtime does: fills uuids with the devices CUDA
 * sees, in CUDA's order (at most cap; entries beyond are not looked at) and
 * sets *count.  0 (count 0: CUDA sees no device), or the query's negative
 * errno, with *count 0. */
int rm__cuda_visible_devices(const char *value, const rm__cuda_query *query, char (*uuids)[RM__CUDA_UUID_MAX],
                             size_t cap, size_t *count);

#endif
