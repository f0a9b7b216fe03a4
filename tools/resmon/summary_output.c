/*
 * summary_output.c -- the run's summary as JSON (-o) and as the human table
 * on stderr.
 *
 * The JSON's figures are the library's (resmon_summary_to_json, from the
 * figure and metric lists); the command adds only keys of its own run.  The
 * table names its figures by hand, the one place that does so on purpose:
 * each line joins figures under words of its own (PSS with swap and
 * virtual, the four I/O totals, throttled time with periods), picks between
 * sources (wait4 or VmHWM, the cgroup's peak or the sampled one) and runs in
 * the order a reader wants, not the structs'; a list column for that would
 * be the table again, spelled as macro arguments.
 */
#include "summary_output.h"
#include "json_number.h"
#include "options.h"
#include "phases_output.h"
#include "process_records.h"
#include "processes_output.h"
#include "run_result.h"
#include "text_output.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Whom the leaf's OOM kills took, as far as the run can tell: the kernel
 * counts the kills but names no victim.  A command that did not die of
 * SIGKILL was not one.  One that did was, when no other process of the run
 * died of SIGKILL, or when the kills were as many as the SIGKILLed
 * processes; otherwise its SIGKILL may have been its own (`kill -9 $$`, a
 * supervisor's timeout after a child's OOM kill): "command_or_descendant",
 * never a guess (stop 56's attack: "command" for a script that killed
 * itself after its child was OOM-killed). */
static const char *oom_victim(const run_result *r)
{
    if (r->term_signal != SIGKILL)
        return "descendant";
    if (!r->processes)
        return "command_or_descendant";
    process_totals t;
    process_records_totals(r->processes, &t);
    if (t.source_error || t.overruns || t.unattributed)
        return "command_or_descendant"; /* no kernel records (no taskstats: a network namespace), or some
                                          * lost: a SIGKILLed descendant may be among the processes unseen */
    unsigned long others = t.killed > 0 ? t.killed - 1 : 0; /* the command's own record is one */
    return others == 0 || r->summary.cgroup_oom_kills >= (double)t.killed ? "command" : "command_or_descendant";
}

static void put_number(FILE *out, const char *key, double value)
{
    char number[32];
    rm__json_format_double(value, number);
    fprintf(out, ", \"%s\": %s", key, number);
}

/* Bytes in the unit that keeps 3-4 significant digits readable. */
static void format_bytes(double bytes, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t unit = 0;
    while (bytes >= 1024 && unit + 1 < sizeof units / sizeof *units) {
        bytes /= 1024;
        unit++;
    }
    snprintf(buf, cap, unit ? "%.1f %s" : "%.0f %s", bytes, units[unit]);
}

/* The metric groups' lines of the table, each only when known. */
static void print_metric_groups(FILE *out, const resmon_summary *s)
{
    if (!isnan(s->peak_pss_mb))
        fprintf(out, "  %-16s %10.1f MiB  proportional: shared pages split between their users; swap %.1f MiB, "
                     "virtual %.1f MiB\n",
                "peak PSS", s->peak_pss_mb, s->peak_swap_mb, s->peak_vmem_mb);
    if (!isnan(s->peak_uss_mb))
        fprintf(out, "  %-16s %10.1f MiB  unique: private pages, what ending the processes frees\n", "peak USS",
                s->peak_uss_mb);
    if (!isnan(s->io_rchar)) {
        char read[32], written[32], storage_read[32], storage_written[32];
        format_bytes(s->io_rchar, read, sizeof read);
        format_bytes(s->io_wchar, written, sizeof written);
        format_bytes(s->io_read_bytes, storage_read, sizeof storage_read);
        format_bytes(s->io_write_bytes, storage_written, sizeof storage_written);
        fprintf(out, "  %-16s read %s, written %s (calls); storage read %s, written %s\n", "I/O", read, written,
                storage_read, storage_written);
    }
    if (!isnan(s->peak_nprocs))
        fprintf(out, "  %-16s %10.0f      process%s at most, %.0f thread%s\n", "processes", s->peak_nprocs,
                s->peak_nprocs == 1 ? "" : "es", s->peak_nthreads, s->peak_nthreads == 1 ? "" : "s");
    if (!isnan(s->cpu_user_sec))
        fprintf(out, "  %-16s %10.2f s    user, %.2f s system (clock ticks)\n", "CPU split", s->cpu_user_sec,
                s->cpu_sys_sec);
    if (!isnan(s->minor_faults))
        fprintf(out, "  %-16s %10.0f      minor, %.0f major; context switches %.0f voluntary, %.0f involuntary\n",
                "page faults", s->minor_faults, s->major_faults, s->voluntary_switches, s->involuntary_switches);
    if (s->peak_unreadable_procs > 0)
        fprintf(out, "  %-16s %10.0f      process%s not readable in full (not ours, or not dumpable): the figures "
                     "above are of the rest\n",
                "unreadable", s->peak_unreadable_procs, s->peak_unreadable_procs == 1 ? "" : "es");
    if (!isnan(s->net_rx_bytes)) {
        char received[32], sent[32];
        format_bytes(s->net_rx_bytes, received, sizeof received);
        format_bytes(s->net_tx_bytes, sent, sizeof sent);
        fprintf(out, "  %-16s received %s, sent %s (the whole network namespace)\n", "network", received, sent);
    }
}

static void format_iso8601(double epoch, char *buf, size_t cap)
{
    time_t seconds = (time_t)epoch;
    struct tm utc;
    gmtime_r(&seconds, &utc);
    size_t n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &utc);
    snprintf(buf + n, cap - n, ".%03dZ", (int)((epoch - (double)seconds) * 1000));
}

/* The tree's exact peak from its cgroup, first among the memory lines, with
 * its scope; or, once, why there is none. */
static void print_cgroup_peak(FILE *out, const cli_options *o, const run_result *r)
{
    const resmon_summary *s = &r->summary;
    if (s->cgroup_version && !isnan(s->cgroup_peak_mb)) {
        fprintf(out, "  %-16s %10.1f MiB  cgroup v%d: whole tree, page cache and kernel memory included%s\n",
                "peak memory", s->cgroup_peak_mb, (int)s->cgroup_version,
                o->cgroup_path ? " (the cgroup's lifetime peak)" : "");
        double rss = fmax(s->peak_rss_mb, r->have_rusage ? r->rusage_maxrss_mb : s->hwm_rss_mb);
        if (s->cgroup_peak_mb < rss) /* a warm page cache: why the exact figure is the lower one */
            fprintf(out, "%35s(%s)\n", "", TREE_BELOW_RSS_NOTE); /* under the line's words */
        if (o->memory_limit_bytes >= 104858) /* 0.1 MiB and more: MiB as the lines above */
            fprintf(out, "  %-16s %10.1f MiB\n", "memory limit", (double)o->memory_limit_bytes / 1048576.0);
        else if (o->memory_limit_bytes) /* a few pages: not "0.0 MiB" (attack 73) */
            fprintf(out, "  %-16s %10.1f KiB\n", "memory limit", (double)o->memory_limit_bytes / 1024.0);
        if (o->memory_limit_bytes && !isnan(r->memory_limit_at_end_mb)) {
            char now[48] = "none";
            if (isfinite(r->memory_limit_at_end_mb))
                snprintf(now, sizeof now, "%.1f MiB", r->memory_limit_at_end_mb);
            fprintf(out, "%35s(changed during the run, to %s: the run was not bound as asked)\n", "", now);
        }
        if (o->memory_limit_bytes && !isnan(r->swap_allowed_at_end_mb)) {
            char swap[64] = "without a bound";
            if (isfinite(r->swap_allowed_at_end_mb))
                snprintf(swap, sizeof swap, "up to %.1f MiB", r->swap_allowed_at_end_mb);
            fprintf(out, "%35s(swap let in during the run, %s: the limit no longer bounds memory and swap)\n", "",
                    swap);
        }
        if (o->memory_limit_bytes && r->orphans_moved_out > 0)
            fprintf(out, "%35s(%d process%s left running moved out of the run's cgroup: not bound)\n", "",
                    r->orphans_moved_out, r->orphans_moved_out == 1 ? "" : "es");
        if (s->cgroup_oom_kills > 0)
            fprintf(out, "  %-16s %10.0f      process%s killed by the kernel's OOM killer%s\n", "OOM kills",
                    s->cgroup_oom_kills, s->cgroup_oom_kills == 1 ? "" : "es",
                    o->pid || o->cgroup_path ? " in the cgroup during the run"
                    : strcmp(oom_victim(r), "command") == 0 ? ", the command among them"
                    : strcmp(oom_victim(r), "descendant") == 0
                        ? ", in the command's tree"
                        : ", in the command's tree (the command too, or it ended by a SIGKILL of its own)");
        if (!isnan(s->cgroup_throttled_sec))
            fprintf(out, "  %-16s %10.3f s    CPU throttled (cgroup cpu.stat), %.0f period%s\n", "throttled",
                    s->cgroup_throttled_sec, s->cgroup_nr_throttled, s->cgroup_nr_throttled == 1 ? "" : "s");
        if (!isnan(s->cgroup_io_read_bytes)) {
            char read[32], written[32];
            format_bytes(s->cgroup_io_read_bytes, read, sizeof read);
            format_bytes(s->cgroup_io_write_bytes, written, sizeof written);
            fprintf(out, "  %-16s read %s, written %s (cgroup io.stat, storage)\n", "cgroup I/O", read, written);
        }
        if (!isnan(s->walk_interval_sec))
            fprintf(out, "  %-16s %10.2f s    a wide tree: each sample's CPU from the cgroup's total, RSS and the "
                         "groups from a walk of its processes this often (held between)\n",
                    "walk interval", s->walk_interval_sec);
    } else if (r->cgroup_note[0]) {
        fprintf(out, "  %-16s no cgroup: ", "peak memory");
        print_printable(out, r->cgroup_note);
        fputs("; the peaks here are per process or sampled\n", out);
    } else if (s->cgroup_error) {
        fputs("  peak memory      no cgroup: ", out);
        print_printable(out, o->cgroup_path ? o->cgroup_path : "");
        fprintf(out, ": %s\n", resmon_strerror(s->cgroup_error));
    }
}

int summary_write_json(FILE *out, const cli_options *o, const run_result *r)
{
    /* The library writes the seed's keys (and the window's CPU figures and
     * exact peak) as one object; the command's own keys follow in it.  The
     * header promises the text runs from '{' to '}'. */
    int len = resmon_summary_to_json(&r->summary, NULL, 0);
    char *base = len >= 2 ? malloc((size_t)len + 1) : NULL;
    if (!base)
        return -1;
    resmon_summary_to_json(&r->summary, base, (size_t)len + 1);
    fwrite(base, 1, (size_t)len - 1, out); /* all but the closing brace */
    free(base);

    put_number(out, "wall_sec", r->wall_sec);
    /* Exact CPU seconds from the kernel when we reaped the command; else the
     * sampled CPU clock total. */
    put_number(out, "cpu_sec", r->have_rusage ? r->rusage_cpu_sec : r->summary.cpu_time_sec);
    fprintf(out, ", \"cpu_sec_source\": \"%s\"", r->have_rusage ? "wait4" : "samples");
    if (r->have_rusage) {
        put_number(out, "exact_peak_rss_mb", r->rusage_maxrss_mb);
        fprintf(out, ", \"exact_peak_rss_source\": \"%s\"", isnan(r->wait4_maxrss_mb) ? "wait4" : "samples");
    }
    put_number(out, "interval_sec", o->interval_sec);
    char when[40];
    format_iso8601(r->start_wall_epoch, when, sizeof when);
    fprintf(out, ", \"start_time\": \"%s\"", when);
    if (o->pid) {
        fprintf(out, ", \"pid\": %d", (int)o->pid);
    } else if (!o->watch_cgroup) { /* a watched cgroup is named by cgroup_path below */
        fputs(", \"command\": [", out);
        for (int i = 0; i < o->argc; i++) {
            if (i)
                fputs(", ", out);
            json_write_string(out, o->argv[i]);
        }
        fputc(']', out);
    }
    if (r->have_exit) {
        fprintf(out, ", \"exit_status\": %d", r->exit_status);
        if (r->term_signal)
            fprintf(out, ", \"signal\": %d", r->term_signal);
    } else {
        fputs(", \"exit_status\": null", out);
    }
    fprintf(out, ", \"include_children\": %s", o->include_children ? "true" : "false");
    fputs(", \"gpus\": [", out);
    for (size_t i = 0; i < resmon_gpu_device_count(r->gpu); i++) {
        resmon_gpu_info info;
        resmon_gpu_device_info(r->gpu, i, &info, sizeof info);
        fprintf(out, "%s{\"backend\": \"%s\", \"index\": %u, \"name\": ", i ? ", " : "", info.backend, info.index);
        json_write_string(out, info.name);
        fputs(", \"id\": ", out);
        json_write_string(out, info.id);
        char number[32];
        rm__json_format_double(info.memory_total_mb, number);
        fprintf(out, ", \"memory_total_mb\": %s}", number);
    }
    fputc(']', out);
    if (r->gpu) { /* what "auto"/"all" picked and why; "" for a named device */
        fputs(", \"gpu_selection\": ", out);
        json_write_string(out, resmon_gpu_selection(r->gpu));
    }
    if (r->cgroup_note[0]) { /* why the command ran without a cgroup of its own */
        fputs(", \"cgroup_unavailable\": ", out);
        json_write_string(out, r->cgroup_note);
    }
    if (o->cgroup_path) {
        fputs(", \"cgroup_path\": ", out);
        json_write_string(out, o->cgroup_path);
    }
    if (o->memory_limit_bytes) /* --memory-limit: the limit the run ran under (memory.max), MiB */
        put_number(out, "memory_limit_mb", (double)o->memory_limit_bytes / 1048576.0);
    if (o->memory_limit_bytes && isinf(r->memory_limit_at_end_mb)) /* the run changed it: null is "none" */
        fputs(", \"memory_limit_at_end_mb\": null", out);
    else if (o->memory_limit_bytes && !isnan(r->memory_limit_at_end_mb))
        put_number(out, "memory_limit_at_end_mb", r->memory_limit_at_end_mb);
    if (o->memory_limit_bytes && isinf(r->swap_allowed_at_end_mb)) /* swap let in: null is "no bound" */
        fputs(", \"swap_allowed_at_end_mb\": null", out);
    else if (o->memory_limit_bytes && !isnan(r->swap_allowed_at_end_mb))
        put_number(out, "swap_allowed_at_end_mb", r->swap_allowed_at_end_mb);
    if (o->memory_limit_bytes && r->moved_out_known) /* left running outside the limit's leaf */
        fprintf(out, ", \"orphans_moved_out\": %d", r->orphans_moved_out);
    /* The command itself, or one of its tree -- in a leaf of the run's own:
     * a given cgroup's kills (--cgroup PATH COMMAND) may be any of its
     * processes', the command's or not. */
    if (r->summary.cgroup_oom_kills > 0 && !o->pid && !o->cgroup_path)
        fprintf(out, ", \"oom_killed\": \"%s\"", oom_victim(r));
    fprintf(out, ", \"interrupted\": %s", r->interrupted ? "true" : "false");
    if (!o->pid && !o->watch_cgroup) /* adopted descendants still running when resmon stopped */
        fprintf(out, ", \"orphans_left\": %d", r->orphans_left);
    phases_write_json(out, r);
    processes_write_json(out, r);
    fprintf(out, ", \"resmon_version\": \"%s\"}\n", resmon_version_string());
    return ferror(out) ? -1 : 0;
}

static void print_exact_peak(FILE *out, const run_result *r)
{
    const resmon_summary *s = &r->summary;
    if (r->have_rusage && !isnan(r->wait4_maxrss_mb))
        fprintf(out, "  %-16s %10.1f MiB  sampled, largest single process: wait4 said %.1f (a process reset its "
                "peak mark, or was not reaped)\n", "exact peak RSS", r->rusage_maxrss_mb, r->wait4_maxrss_mb);
    else if (r->have_rusage)
        fprintf(out, "  %-16s %10.1f MiB  wait4: largest single process, exact\n", "exact peak RSS",
                r->rusage_maxrss_mb);
    else if (!isnan(s->hwm_rss_mb))
        fprintf(out, "  %-16s %10.1f MiB  exact, largest single process (%s)\n", "exact peak RSS", s->hwm_rss_mb,
                s->hwm_scope == RESMON_HWM_WINDOW ? "VmHWM in window" : "VmHWM, process lifetime");
}

void summary_print_table(FILE *out, const cli_options *o, const run_result *r)
{
    const resmon_summary *s = &r->summary;
    if (o->watch_cgroup) {
        fputs("resmon: the processes of cgroup ", out);
        print_printable(out, o->cgroup_path);
    } else if (o->pid)
        fprintf(out, "resmon: process %d%s", (int)o->pid, o->include_children ? " and its descendants" : "");
    else {
        fputs("resmon: ", out);
        print_printable(out, o->argv[0]);
    }
    if (r->have_exit && r->term_signal)
        fprintf(out, " was killed by signal %d (exit status %d)\n", r->term_signal, r->exit_status);
    else if (r->have_exit)
        fprintf(out, " exited with status %d\n", r->exit_status);
    else
        fprintf(out, r->interrupted ? " (monitoring interrupted)\n" : "\n");
    fprintf(out, "  %-16s %10.3f s\n", "wall time", r->wall_sec);
    /* One CPU truth per line: the kernel's seconds (wait4) with their own
     * mean over the wall time, or the sampled seconds with the sampled mean;
     * the peak is always a sample's, and says so. */
    if (r->have_rusage)
        fprintf(out, "  %-16s %10.3f s    kernel (wait4); mean %.0f %% of wall, sampled peak %.0f %%\n", "CPU time",
                r->rusage_cpu_sec, r->wall_sec > 0 ? 100.0 * r->rusage_cpu_sec / r->wall_sec : 0.0,
                s->peak_cpu_percent);
    else
        fprintf(out, "  %-16s %10.3f s    sampled; mean %.0f %%, peak %.0f %%\n", "CPU time", s->cpu_time_sec,
                s->mean_cpu_percent, s->peak_cpu_percent);
    /* The first memory line is the best figure the run has: the cgroup's
     * peak, else the larger of the exact largest process and the sampled
     * sum; the others follow as what they are. */
    int cgroup_leads = s->cgroup_version && !isnan(s->cgroup_peak_mb);
    double exact = r->have_rusage ? r->rusage_maxrss_mb : s->hwm_rss_mb;
    int exact_leads = !cgroup_leads && !isnan(exact) && exact >= s->peak_rss_mb;
    if (cgroup_leads)
        print_cgroup_peak(out, o, r);
    if (exact_leads)
        print_exact_peak(out, r);
    else
        fprintf(out, "  %-16s %10.1f MiB  sampled: sum of RSS at the samples\n", "peak RSS", s->peak_rss_mb);
    if (!cgroup_leads)
        print_cgroup_peak(out, o, r); /* why there is none, once */
    if (exact_leads)
        fprintf(out, "  %-16s %10.1f MiB  sampled: sum of RSS at the samples\n", "peak RSS", s->peak_rss_mb);
    else
        print_exact_peak(out, r);
    fprintf(out, "  %-16s %10.1f MiB\n", "mean RSS", s->mean_rss_mb);
    print_metric_groups(out, s);
    if (!isnan(s->mean_gpu_util))
        fprintf(out, "  %-16s %10.1f %%\n", "mean GPU util", s->mean_gpu_util);
    if (!isnan(s->peak_gpu_mem_mb))
        fprintf(out, "  %-16s %10.1f MiB\n", "peak GPU memory", s->peak_gpu_mem_mb);
    if (!isnan(s->mean_gpu_power_w))
        fprintf(out, "  %-16s %10.1f W\n", "mean GPU power", s->mean_gpu_power_w);
    if (!isnan(s->gpu_energy_j))
        fprintf(out, "  %-16s %10.1f J    %s\n", "GPU energy", s->gpu_energy_j,
                s->gpu_energy_source == RESMON_ENERGY_COUNTER ? "from the energy counter" : "power integrated over samples");
    if (!isnan(s->peak_gpu_proc_mem_mb))
        fprintf(out, "  %-16s %10.1f MiB  GPU memory of the monitored processes\n", "peak proc GPU", s->peak_gpu_proc_mem_mb);
    if (!isnan(s->cpu_energy_j))
        fprintf(out, "  %-16s %10.1f J    CPU packages (RAPL)\n", "CPU energy", s->cpu_energy_j);
    for (size_t i = 0; i < resmon_gpu_device_count(r->gpu); i++) {
        resmon_gpu_info info;
        resmon_gpu_device_info(r->gpu, i, &info, sizeof info);
        fprintf(out, "  %-16s %s:%u ", i ? "" : "GPU", info.backend, info.index);
        print_printable(out, info.name);
        fputc('\n', out);
    }
    fprintf(out, "  %-16s %10llu      every %g s", "samples", (unsigned long long)s->num_samples, o->interval_sec);
    if (s->skipped_slots)
        fprintf(out, ", %llu slot%s skipped (sampler ran late)", (unsigned long long)s->skipped_slots,
                s->skipped_slots == 1 ? "" : "s");
    if (o->interval_sec < 0.02) /* a few scheduler ticks (RM__CPU_PEAK_SPAN_SEC): see resmon(1), CPU time */
        fputs("; under a few scheduler ticks, one sample's CPU % is coarse (peak over 20 ms spans)", out);
    fputc('\n', out);
    phases_print_table(out, r);
    processes_print_table(out, r);
}
