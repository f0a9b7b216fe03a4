/*
 * process_list.c -- the per-process records of a window, bounded (see
 * process_list.h).
 */
#include "process_list.h"
#include "struct_size.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(resmon_process) % 8 == 0, "a record grows in whole 8-byte units, never ending in padding");

void rm__process_list_reset(rm__process_list *l)
{
    l->by_peak.count = 0;
    l->by_cpu.count = 0;
    l->seen = 0;
}

typedef double (*figure_of)(const resmon_process *r);

static double peak_of(const resmon_process *r)
{
    return r->peak_rss_mb;
}

static double cpu_of(const resmon_process *r)
{
    return r->cpu_sec;
}

/* a ranks below b: a smaller figure, or an equal one that came later (the
 * first of equals stays). */
static int ranks_below(const rm__process_entry *a, const rm__process_entry *b, figure_of figure)
{
    double fa = figure(&a->record), fb = figure(&b->record);
    return fa < fb || (fa == fb && a->serial > b->serial);
}

static void swap_entries(rm__process_entry *a, rm__process_entry *b)
{
    rm__process_entry t = *a;
    *a = *b;
    *b = t;
}

static void sift_down(rm__process_ranking *k, size_t i, figure_of figure)
{
    for (;;) {
        size_t least = i, left = 2 * i + 1, right = left + 1;
        if (left < k->count && ranks_below(&k->heap[left], &k->heap[least], figure))
            least = left;
        if (right < k->count && ranks_below(&k->heap[right], &k->heap[least], figure))
            least = right;
        if (least == i)
            return;
        swap_entries(&k->heap[i], &k->heap[least]);
        i = least;
    }
}

static void sift_up(rm__process_ranking *k, size_t i, figure_of figure)
{
    while (i > 0 && ranks_below(&k->heap[i], &k->heap[(i - 1) / 2], figure)) {
        swap_entries(&k->heap[i], &k->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

static void rank(rm__process_ranking *k, const rm__process_entry *e, figure_of figure)
{
    if (k->count < RESMON_PROCESS_TOP) {
        k->heap[k->count++] = *e;
        sift_up(k, k->count - 1, figure);
    } else if (ranks_below(&k->heap[0], e, figure)) {
        k->heap[0] = *e;
        sift_down(k, 0, figure);
    }
}

void rm__process_list_add(rm__process_list *l, const resmon_process *r)
{
    rm__process_entry e = {.serial = l->seen++, .record = *r};
    rank(&l->by_peak, &e, peak_of);
    rank(&l->by_cpu, &e, cpu_of);
}

static int by_peak_first(const void *a, const void *b)
{
    const rm__process_entry *x = a, *y = b;
    if (x->record.peak_rss_mb != y->record.peak_rss_mb)
        return x->record.peak_rss_mb > y->record.peak_rss_mb ? -1 : 1;
    if (x->record.cpu_sec != y->record.cpu_sec)
        return x->record.cpu_sec > y->record.cpu_sec ? -1 : 1;
    return x->serial < y->serial ? -1 : x->serial > y->serial;
}

static int is_in(const rm__process_ranking *k, uint64_t serial)
{
    for (size_t i = 0; i < k->count; i++)
        if (k->heap[i].serial == serial)
            return 1;
    return 0;
}

size_t rm__process_list_copy(const rm__process_list *l, resmon_process *out, size_t cap, size_t stride)
{
    rm__process_entry all[RESMON_MAX_PROCESSES];
    size_t n = 0;
    for (size_t i = 0; i < l->by_peak.count; i++)
        all[n++] = l->by_peak.heap[i];
    for (size_t i = 0; i < l->by_cpu.count; i++)
        if (!is_in(&l->by_peak, l->by_cpu.heap[i].serial))
            all[n++] = l->by_cpu.heap[i];
    qsort(all, n, sizeof *all, by_peak_first);
    for (size_t i = 0; i < n && i < cap; i++) {
        resmon_process r = all[i].record;
        r.struct_size = rm__out_size(stride, sizeof r);
        rm__copy_struct_out((unsigned char *)out + i * stride, stride, &r, sizeof r);
    }
    return n;
}
