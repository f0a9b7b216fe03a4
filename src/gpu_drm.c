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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Card numbers considered: far above any real one (the kernel numbers
 * primary nodes below 64), small enough for a bitmap on the stack. */
#define DRM_CARD_NUMBER_LIMIT 4096

/* The driver's name: the last component of the device/driver symlink. */
static int card_driver(const rm__sysfs *fs, int card, char *out, size_t cap)
{
    char rel[96], path[PATH_MAX], target[PATH_MAX];
    snprintf(rel, sizeof rel, "class/drm/card%d/device/driver", card);
    if (rm__sysfs_path(fs, rel, path, sizeof path) < 0)
        return -ENAMETOOLONG;
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0)
        return -errno;
    target[n] = '\0';
    const char *slash = strrchr(target, '/');
    const char *name = slash ? slash + 1 : target;
    rm__copy_string(out, cap, name, strlen(name));
    return 0;
}

static bool card_matches(const rm__sysfs *fs, int card, unsigned vendor_id, const char *const *drivers)
{
    char rel[64], driver[64];
    uint64_t vendor;
    snprintf(rel, sizeof rel, "class/drm/card%d/device/vendor", card);
    if (rm__sysfs_read_u64(fs, rel, &vendor) < 0 || vendor != vendor_id)
        return false;
    if (card_driver(fs, card, driver, sizeof driver) < 0)
        return false;
    for (const char *const *d = drivers; *d; d++)
        if (strcmp(driver, *d) == 0)
            return true;
    return false;
}

size_t rm__drm_find_cards(const rm__sysfs *fs, unsigned vendor_id, const char *const *drivers,
                          int cards[RM__GPU_MAX_DEVICES])
{
    DIR *dir = rm__sysfs_opendir(fs, "class/drm");
    if (!dir)
        return 0;
    /* readdir's order is arbitrary: mark matching numbers, then walk them in
     * order, so "amd:0" is always the lowest-numbered AMD card. */
    bool matching[DRM_CARD_NUMBER_LIMIT] = {false};
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        /* "cardN" only: "card0-DP-1" and "renderD128" are not cards. */
        if (strncmp(e->d_name, "card", 4) != 0 || !e->d_name[4])
            continue;
        char *end;
        long card = strtol(e->d_name + 4, &end, 10);
        if (*end == '\0' && card >= 0 && card < DRM_CARD_NUMBER_LIMIT &&
            card_matches(fs, (int)card, vendor_id, drivers))
            matching[card] = true;
    }
    closedir(dir);
    size_t count = 0;
    for (int card = 0; card < DRM_CARD_NUMBER_LIMIT && count < RM__GPU_MAX_DEVICES; card++)
        if (matching[card])
            cards[count++] = card;
    return count;
}

void rm__drm_describe(const rm__sysfs *fs, int card, unsigned index, const char *backend, resmon_gpu_info *info)
{
    memset(info, 0, sizeof *info);
    snprintf(info->backend, sizeof info->backend, "%s", backend);
    info->index = index;
    char rel[96], text[256];
    snprintf(rel, sizeof rel, "class/drm/card%d/device/product_name", card);
    if (rm__sysfs_read(fs, rel, text, sizeof text) > 0)
        rm__copy_string(info->name, sizeof info->name, text, sizeof text);
    else
        snprintf(info->name, sizeof info->name, "%s GPU (card%d)", strcmp(backend, "amd") == 0 ? "AMD" : "Intel", card);
    /* The PCI address, from uevent's PCI_SLOT_NAME. */
    snprintf(rel, sizeof rel, "class/drm/card%d/device/uevent", card);
    snprintf(info->id, sizeof info->id, "card%d", card);
    if (rm__sysfs_read(fs, rel, text, sizeof text) > 0) {
        const char *slot = strstr(text, "PCI_SLOT_NAME=");
        if (slot) {
            slot += strlen("PCI_SLOT_NAME=");
            rm__copy_string(info->id, sizeof info->id, slot, strcspn(slot, "\n"));
        }
    }
    info->memory_total_mb = NAN;
}

static bool is_vendor_driver(const rm__drm_vendor *v, const char *name)
{
    for (const char *const *d = v->drivers; *d; d++)
        if (strcmp(name, *d) == 0)
            return true;
    return false;
}

/* The card's hwmon directory ("class/drm/cardN/device/hwmon/hwmonM"): the
 * one whose "name" is one of the vendor's drivers (a card can carry other
 * hwmon devices), else the lowest-numbered; "" when it has none. */
static void find_hwmon(const rm__drm_vendor *v, rm__drm_card *c)
{
    char rel[96], path[PATH_MAX];
    c->hwmon[0] = '\0';
    snprintf(rel, sizeof rel, "class/drm/card%d/device/hwmon", c->card);
    if (rm__sysfs_path(&c->fs, rel, path, sizeof path) < 0)
        return;
    DIR *dir = opendir(path);
    if (!dir)
        return;
    long lowest = -1, named = -1;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        char *end;
        if (strncmp(e->d_name, "hwmon", 5) != 0)
            continue;
        long number = strtol(e->d_name + 5, &end, 10);
        if (end == e->d_name + 5 || *end || number < 0)
            continue;
        char name_rel[160], name[64];
        snprintf(name_rel, sizeof name_rel, "%s/hwmon%ld/name", rel, number);
        if ((named < 0 || number < named) && rm__sysfs_read(&c->fs, name_rel, name, sizeof name) > 0 &&
            is_vendor_driver(v, name))
            named = number;
        if (lowest < 0 || number < lowest)
            lowest = number;
    }
    closedir(dir);
    long chosen = named >= 0 ? named : lowest;
    if (chosen >= 0)
        snprintf(c->hwmon, sizeof c->hwmon, "%s/hwmon%ld", rel, chosen);
}

int rm__drm_open_card(const rm__gpu_env *env, const rm__drm_vendor *v, const char *selector, rm__drm_card *out,
                      char *err, size_t errcap)
{
    out->fs = env->sysfs;
    if (rm__parse_index(selector, &out->index) < 0) {
        snprintf(err, errcap, "%s GPUs are chosen by index (%s:0), not '%s'", v->label, v->backend, selector);
        return -EINVAL;
    }
    int cards[RM__GPU_MAX_DEVICES];
    size_t count = rm__drm_find_cards(&out->fs, v->vendor_id, v->drivers, cards);
    if (out->index >= count) {
        snprintf(err, errcap, "no %s GPU %u (found %zu with the %s driver)", v->label, out->index, count,
                 v->drivers[0]);
        return count ? -ENOENT : -ENODEV;
    }
    out->card = cards[out->index];
    find_hwmon(v, out);
    return 0;
}
