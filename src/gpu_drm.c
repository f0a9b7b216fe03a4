/*
 * gpu_drm.c -- finding GPUs among DRM cards in sysfs, for the amdgpu and
 * Intel backends.
 *
 * A card is identified by its PCI vendor id and the driver bound to it, never
 * by its number: card0 is often an integrated GPU of another vendor.
 */
#include "gpu_backend.h"
#include "internal.h"
#include "sysfs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int compare_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* The driver's name: the last component of the device/driver symlink. */
static int card_driver(int card, char *out, size_t cap)
{
    char path[PATH_MAX], target[PATH_MAX];
    snprintf(path, sizeof path, "%s/class/drm/card%d/device/driver", rm__sysfs_root(), card);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0)
        return -errno;
    target[n] = '\0';
    const char *slash = strrchr(target, '/');
    const char *name = slash ? slash + 1 : target;
    rm__copy_string(out, cap, name, strlen(name));
    return 0;
}

size_t rm__drm_find_cards(unsigned vendor_id, const char *const *drivers, int *cards, size_t cap)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/class/drm", rm__sysfs_root());
    DIR *dir = opendir(path);
    if (!dir)
        return 0;
    int found[64] = {0};
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL && count < 64) {
        /* "cardN" only: "card0-DP-1" and "renderD128" are not cards. */
        if (strncmp(e->d_name, "card", 4) != 0 || !e->d_name[4])
            continue;
        char *end;
        long card = strtol(e->d_name + 4, &end, 10);
        if (*end != '\0' || card < 0 || card > 4096)
            continue;
        char rel[64];
        uint64_t vendor;
        snprintf(rel, sizeof rel, "class/drm/card%ld/device/vendor", card);
        if (rm__sysfs_read_u64(rel, &vendor) < 0 || vendor != vendor_id)
            continue;
        char driver[64];
        if (card_driver((int)card, driver, sizeof driver) < 0)
            continue;
        for (const char *const *d = drivers; *d; d++)
            if (strcmp(driver, *d) == 0) {
                found[count++] = (int)card;
                break;
            }
    }
    closedir(dir);
    qsort(found, count, sizeof *found, compare_int);
    for (size_t i = 0; i < count && i < cap; i++)
        cards[i] = found[i];
    return count;
}

void rm__drm_describe(int card, unsigned index, const char *backend, resmon_gpu_info *info)
{
    memset(info, 0, sizeof *info);
    snprintf(info->backend, sizeof info->backend, "%s", backend);
    info->index = index;
    char rel[96], text[256];
    snprintf(rel, sizeof rel, "class/drm/card%d/device/product_name", card);
    if (rm__sysfs_read(rel, text, sizeof text) > 0)
        rm__copy_string(info->name, sizeof info->name, text, sizeof text);
    else
        snprintf(info->name, sizeof info->name, "%s GPU (card%d)", strcmp(backend, "amd") == 0 ? "AMD" : "Intel", card);
    /* The PCI address, from uevent's PCI_SLOT_NAME. */
    snprintf(rel, sizeof rel, "class/drm/card%d/device/uevent", card);
    snprintf(info->id, sizeof info->id, "card%d", card);
    if (rm__sysfs_read(rel, text, sizeof text) > 0) {
        const char *slot = strstr(text, "PCI_SLOT_NAME=");
        if (slot) {
            slot += strlen("PCI_SLOT_NAME=");
            rm__copy_string(info->id, sizeof info->id, slot, strcspn(slot, "\n"));
        }
    }
    info->memory_total_mb = NAN;
}

int rm__drm_hwmon_dir(int card, char *out, size_t cap)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/class/drm/card%d/device/hwmon", rm__sysfs_root(), card);
    DIR *dir = opendir(path);
    if (!dir)
        return -ENOENT;
    struct dirent *e;
    int rc = -ENOENT;
    while ((e = readdir(dir)) != NULL) {
        if (strncmp(e->d_name, "hwmon", 5) == 0) {
            snprintf(out, cap, "class/drm/card%d/device/hwmon/%s", card, e->d_name);
            rc = 0;
            break;
        }
    }
    closedir(dir);
    return rc;
}

int rm__parse_index(const char *selector, unsigned *index)
{
    char *end;
    errno = 0;
    unsigned long value = strtoul(selector, &end, 10);
    if (!*selector || *end || errno || value > 1024 || selector[0] == '-')
        return -EINVAL;
    *index = (unsigned)value;
    return 0;
}

int rm__drm_select(const rm__drm_vendor *v, const char *selector, int *card, unsigned *index, char *hwmon,
                   size_t hwmon_cap, char *err, size_t errcap)
{
    if (rm__parse_index(selector, index) < 0) {
        snprintf(err, errcap, "%s GPUs are chosen by index (%s:0), not '%s'", v->label, v->backend, selector);
        return -EINVAL;
    }
    int cards[64];
    size_t count = rm__drm_find_cards(v->vendor_id, v->drivers, cards, 64);
    if (*index >= count) {
        snprintf(err, errcap, "no %s GPU %u (found %zu with the %s driver)", v->label, *index, count, v->drivers[0]);
        return count ? -ENOENT : -ENODEV;
    }
    *card = cards[*index];
    if (rm__drm_hwmon_dir(*card, hwmon, hwmon_cap) < 0)
        hwmon[0] = '\0';
    return 0;
}
