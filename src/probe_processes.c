/*
 * probe_processes.c -- the per-process records of a probe's tree (see
 * resmon.h, "Processes"): a row's figures handed to the window's list
 * (process_list.h) once, when the process ends and, for those still
 * running, after the window's last reading.  It reads rows only, adding no
 * read of any process: its name and start come from the stat reads the
 * tree already makes (rm__probe_note_identity).
 */
#include "probe_state.h"
#include "internal.h"

#include <errno.h>
#include <math.h>

int rm__probe_processes_keep(rm__probe *p, rm__process_list *list)
{
    if (!p->include_children)
        return -ENOTSUP; /* one process: its stat is not read, and the summary is its record */
    p->records.list = list;
    p->records.window_start_ns = p->previous_boottime_ns;
    return 0;
}

/* Seconds from the window's first reading to boot_ns (CLOCK_BOOTTIME). */
static double window_sec(const rm__probe *p, uint64_t boot_ns)
{
    return ((double)boot_ns - (double)p->records.window_start_ns) * 1e-9;
}

/* last_seen_ns: the last reading that read it. */
static void add_record(rm__probe *p, const rm__tracked *t, uint64_t last_seen_ns, resmon_process_end end)
{
    resmon_process r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.pid = t->pid;
    r.ppid = t->ppid;
    memcpy(r.comm, t->comm, sizeof r.comm);
    r.comm[sizeof r.comm - 1] = '\0';
    r.start_sec = t->start_ticks && p->ticks_per_sec > 0
                      ? window_sec(p, t->start_ticks * (1000000000u / (uint64_t)p->ticks_per_sec))
                      : NAN;
    r.end_sec = window_sec(p, last_seen_ns);
    if (r.end_sec < r.start_sec)
        r.end_sec = r.start_sec; /* tracked by a walk and gone before its first reading */
    r.cpu_sec = (double)t->last_cpu_ns * 1e-9;
    r.peak_rss_mb = (double)rm__probe_known_peak(t) / RM__BYTES_PER_MIB;
    r.end = end;
    r.source = RESMON_PROCESS_SAMPLED;
    rm__process_list_add(p->records.list, &r);
}

void rm__probe_process_ended(rm__probe *p, const rm__tracked *t)
{
    /* The previous reading was the last to read it; a child its parent reaps
     * late was a zombie from the first reading that saw it one, which is its
     * end (rev2 F1: a child reaped a second after its exit ended at the reap). */
    if (p->records.list)
        add_record(p, t, t->exited_seen_ns ? t->exited_seen_ns : p->previous_boottime_ns,
                   t->ending == ENDED_LEFT ? RESMON_PROCESS_LEFT : RESMON_PROCESS_EXITED);
}

void rm__probe_processes_close(rm__probe *p)
{
    if (!p->records.list)
        return;
    for (size_t i = p->members; i < p->count; i++) {
        /* A zombie (statm shows no memory; read at the last reading for
         * every process) has exited, and the root may have been reaped
         * since its last reading (root_gone): their last reading read them
         * as they were. */
        const rm__tracked *t = &p->procs[i];
        int ended = (i == 0 && p->root_gone) || !t->has_memory;
        add_record(p, t, ended ? (t->exited_seen_ns ? t->exited_seen_ns : t->statm_read_ns) : p->previous_boottime_ns,
                   ended ? RESMON_PROCESS_EXITED : RESMON_PROCESS_RUNNING);
    }
    p->records.list = NULL; /* the window's list is complete */
}
