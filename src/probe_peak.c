/*
 * probe_peak.c -- the kernel's peak-RSS marks (VmHWM) of a probe's
 * processes (see probe.h): reset at the window's start, kept (never reset,
 * the largest followed), or watched (never reset, the window's exact peak
 * where a mark that rose shows it).
 */
#include "probe_state.h"
#include "fileio.h"
#include "regular_file.h"

#include <errno.h>
#include <fcntl.h>

/* What a watched process tells of the window's peak (watch_peak_marks).
 * The mark never falls, so when it rose after the process's first reading
 * of the window, its latest value is the largest RSS since then: exact.
 * Otherwise its largest sample is what is known, and the true in-window
 * peak lies between that and the mark (*unrisen_bound). */
static uint64_t watched_peak(const rm__tracked *t, uint64_t *unrisen_bound)
{
    *unrisen_bound = 0;
    if (t->hwm_start_known && t->hwm_bytes > t->hwm_start_bytes)
        return rm__probe_known_peak(t);
    if (t->hwm_start_known)
        *unrisen_bound = t->hwm_start_bytes;
    return t->peak_rss_bytes;
}

static void note_watched(const rm__tracked *t, uint64_t *window, uint64_t *lifetime, uint64_t *unrisen)
{
    uint64_t bound, figure = watched_peak(t, &bound);
    if (figure > *window)
        *window = figure;
    if (rm__probe_known_peak(t) > *lifetime)
        *lifetime = rm__probe_known_peak(t);
    if (bound > *unrisen)
        *unrisen = bound;
}

/* A process that ended keeps its peak for the window's. */
void rm__probe_peak_settle(rm__probe *p, const rm__tracked *t)
{
    if (rm__probe_known_peak(t) > p->peak.ended_bytes)
        p->peak.ended_bytes = rm__probe_known_peak(t);
    if (t->hwm_bytes)
        p->peak.ended_known = 1;
    if (p->peak.watch_marks)
        note_watched(t, &p->peak.ended_window_bytes, &p->peak.ended_lifetime_bytes, &p->peak.ended_unrisen_bytes);
}

/* The kernel's peak-RSS mark of the root, read during the window so that it
 * survives the root's exit (a reaped process has no status to read).  This
 * process's own mark needs no such care: it cannot end before stop. */
void rm__probe_peak_refresh_root(rm__probe *p, uint64_t boot_ns)
{
    rm__tracked *root = &p->procs[0];
    if (root->is_self || boot_ns - root->hwm_read_ns < PEAK_REFRESH_NS)
        return;
    uint64_t bytes;
    if (root->status_fd < 0)
        root->status_fd = rm__openat(root->dir_fd, "status", RM__READ_FLAGS);
    if (root->status_fd >= 0 && rm__pread_peak_rss(root->status_fd, &bytes) == 0) {
        root->hwm_bytes = bytes;
        root->hwm_read_ns = boot_ns;
    }
}

/* After a live process's reading: the marks kept (the largest seen, so the
 * lifetime peak survives the process's exit: a zombie, or a process already
 * reaped, has no mark) or watched (one status read per process and window). */
void rm__probe_peak_marks_after_read(rm__probe *p, rm__tracked *t, const rm__process_reading *now)
{
    uint64_t bytes;
    /* A mark rises only by the process's own page faults, so only while it
     * runs: a process whose CPU clock stood still since its latest mark
     * read is not read again (a sleeping tree costs no status per sample). */
    int ran = !t->hwm_kept_read || now->cpu_ns != t->hwm_kept_cpu_ns;
    if (p->peak.keep_marks && ran && now->has_memory && rm__read_peak_rss(t->dir_fd, &bytes) == 0) {
        t->hwm_kept_read = 1;
        t->hwm_kept_cpu_ns = now->cpu_ns;
        if (bytes > p->peak.lifetime_bytes)
            p->peak.lifetime_bytes = bytes;
    }
    if (p->peak.watch_marks && !t->hwm_start_known && now->has_memory && rm__read_peak_rss(t->dir_fd, &bytes) == 0) {
        t->hwm_start_known = 1;
        /* Born in the window, its mark holds no peak from before it: the
         * mark read now is the window's, exact (taken for its start, a
         * child that peaked before its first reading and then freed its
         * memory made the window's peak "lifetime", review 63 F5).  Not
         * while it shares its parent's memory, whose mark is the parent's. */
        int whole_life = t->born_in_window && !(t->metrics.shares & RM__SHARES_MEMORY);
        t->hwm_start_bytes = whole_life ? 0 : bytes;
        if (bytes > t->hwm_bytes)
            t->hwm_bytes = bytes;
    }
}

/* After the window's first reading: reset the marks, unless kept or watched. */
void rm__probe_peak_begin(rm__probe *p)
{
    p->peak.reset_error = 0;
    if (p->peak.keep_marks)
        return;
    if (p->peak.watch_marks) { /* the start marks were read with the reading */
        rm__probe_peak_refresh_root(p, p->previous_boottime_ns);
        return;
    }
    for (size_t i = p->members; i < p->count; i++) {
        p->procs[i].hwm_bytes = 0; /* read before the reset: not this window's */
        p->procs[i].hwm_read_ns = 0;
        p->procs[i].hwm_mark_read = 0;
        int reset = rm__reset_peak_rss(p->procs[i].dir_fd);
        p->procs[i].peak_reset_ok = reset == 0;
        if (reset < 0 && p->peak.reset_error == 0)
            p->peak.reset_error = reset;
    }
    rm__probe_peak_refresh_root(p, p->previous_boottime_ns); /* known even if it ends before the next reading */
}

int rm__probe_peak_read(rm__probe *p, uint64_t *bytes, resmon_hwm_scope *scope, int *reset_error)
{
    uint64_t peak = p->peak.ended_bytes > p->peak.lifetime_bytes ? p->peak.ended_bytes : p->peak.lifetime_bytes;
    int any = p->peak.ended_known || p->peak.lifetime_bytes > 0, read_error = -ESRCH;
    for (size_t i = p->members; i < p->count; i++) {
        rm__tracked *t = &p->procs[i];
        uint64_t value;
        int reaped_root = i == 0 && p->root_gone;
        /* A mark rises only by the process's own page faults: one whose CPU
         * clock stood still since the reading before its latest mark read
         * keeps that mark, unread (a sleeping tree costs no status a second). */
        int mark_stands = i != 0 && t->hwm_mark_read && t->last_cpu_ns == t->hwm_mark_cpu_ns;
        int rc = reaped_root ? -ESRCH : mark_stands ? 0 : rm__read_peak_rss(t->dir_fd, &value);
        if (rc == 0 && !mark_stands) {
            t->hwm_mark_read = 1;
            t->hwm_mark_cpu_ns = t->last_cpu_ns;
        }
        if (rc == 0 && !mark_stands && value > t->hwm_bytes)
            t->hwm_bytes = value; /* a zombie has no mark: its last read stands */
        else if (rc < 0 && i == 0 && !reaped_root)
            read_error = rc; /* the root's reason, e.g. -EMFILE: no descriptor left */
        if (t->hwm_bytes) {
            any = 1;
            if (rm__probe_known_peak(t) > peak)
                peak = rm__probe_known_peak(t);
        }
    }
    if (!any)
        return read_error;
    *bytes = peak;
    *scope = p->peak.reset_error || p->peak.keep_marks ? RESMON_HWM_LIFETIME : RESMON_HWM_WINDOW;
    *reset_error = p->peak.reset_error;
    if (p->peak.watch_marks) {
        /* Exact when no process whose mark stayed put could have peaked
         * above the figure; else the lifetime figure, said to be one. */
        uint64_t window = p->peak.ended_window_bytes, lifetime = p->peak.ended_lifetime_bytes, unrisen = p->peak.ended_unrisen_bytes;
        for (size_t i = p->members; i < p->count; i++)
            note_watched(&p->procs[i], &window, &lifetime, &unrisen);
        int exact = unrisen <= window;
        *bytes = exact ? window : lifetime;
        *scope = exact ? RESMON_HWM_WINDOW : RESMON_HWM_LIFETIME;
    }
    return 0;
}
