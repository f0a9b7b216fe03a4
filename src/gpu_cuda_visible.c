/*
 * gpu_cuda_visible.c -- CUDA_VISIBLE_DEVICES, parsed and resolved as the CUDA
 * runtime does (see gpu_cuda_visible.h).
 */
#include "gpu_cuda_visible.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The leading decimal number of [p, end), as strtoul reads it (an optional
 * '+'; no '-': "-1" names nothing); the rest is ignored.  0, or -EINVAL when
 * there are no digits or the number does not fit. */
static int leading_index(const char *p, const char *end, unsigned *index)
{
    if (p < end && *p == '+')
        p++;
    if (p == end || !is_digit(*p))
        return -EINVAL;
    unsigned long value = 0;
    for (; p < end && is_digit(*p); p++) {
        value = value * 10 + (unsigned long)(*p - '0');
        if (value > UINT_MAX)
            return -EINVAL;
    }
    *index = (unsigned)value;
    return 0;
}

/* "/G/C" exactly. */
static int instance_ids(const char *p, const char *end, unsigned *gi, unsigned *ci)
{
    const char *slash = memchr(p + 1, '/', (size_t)(end - p - 1));
    if (*p != '/' || !slash || slash == p + 1 || slash + 1 == end)
        return -EINVAL;
    for (const char *q = p + 1; q < end; q++)
        if (q != slash && !is_digit(*q))
            return -EINVAL;
    return leading_index(p + 1, slash, gi) < 0 || leading_index(slash + 1, end, ci) < 0 ? -EINVAL : 0;
}

int rm__cuda_parse_entry(const char *text, size_t len, rm__cuda_entry *out)
{
    const char *p = text, *end = text + len;
    while (p < end && is_blank(*p))
        p++;
    while (end > p && is_blank(end[-1]))
        end--;
    size_t n = (size_t)(end - p);
    memset(out, 0, sizeof *out);
    if (n > 8 && strncmp(p, "MIG-GPU-", 8) == 0) { /* MIG-GPU-<uuid>/G/C */
        const char *slash = memchr(p, '/', n);
        size_t uuid_len = slash ? (size_t)(slash - p) - 4 : 0;
        if (!slash || uuid_len <= 4 || uuid_len >= sizeof out->uuid ||
            instance_ids(slash, end, &out->gpu_instance, &out->compute_instance) < 0)
            return -EINVAL;
        out->kind = RM__CUDA_MIG_INSTANCE;
        memcpy(out->uuid, p + 4, uuid_len);
        return 0;
    }
    if (n > 4 && (strncmp(p, "GPU-", 4) == 0 || strncmp(p, "MIG-", 4) == 0)) {
        if (n >= sizeof out->uuid)
            return -EINVAL;
        out->kind = RM__CUDA_UUID;
        memcpy(out->uuid, p, n);
        return 0;
    }
    out->kind = RM__CUDA_INDEX;
    return leading_index(p, end, &out->index);
}

int rm__cuda_visible_devices(const char *value, const rm__cuda_query *query, char (*uuids)[RM__CUDA_UUID_MAX],
                             size_t cap, size_t *count)
{
    *count = 0;
    for (const char *p = value; *count < cap;) {
        size_t len = strcspn(p, ",");
        rm__cuda_entry entry;
        char uuid[RM__CUDA_UUID_MAX] = {0};
        if (rm__cuda_parse_entry(p, len, &entry) < 0)
            break; /* CUDA sees the devices before an invalid entry */
        int rc = query->resolve(query->ctx, &entry, uuid);
        if (rc == -ENOENT)
            break;
        if (rc < 0) {
            *count = 0;
            return rc;
        }
        for (size_t i = 0; i < *count; i++)
            if (strcmp(uuids[i], uuid) == 0) {
                *count = 0; /* a device named twice: CUDA sees none */
                return 0;
            }
        memcpy(uuids[(*count)++], uuid, sizeof uuid);
        if (p[len] != ',')
            break;
        p += len + 1;
    }
    return 0;
}
