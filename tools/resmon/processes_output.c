/*
 * processes_output.c -- every process of the run in the summary JSON
 * ("processes") and the table ("heaviest processes"), from the bounded
 * records of process_records.c.
 */
#include "processes_output.h"
#include "text_output.h"
#include "json_number.h"
#include "options.h"
#include "process_records.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>

/* What a taskstats record's peak is: the process's own VmHWM, which a
 * forked child starts with the pages it shares with its parent (two idle
 * workers of a parent that touched 200 MiB showed 204.8 MiB each): its
 * high-water mark, not what it added, and not "exact" for what it used. */
#define OWN_PEAK                                                                                                \
    "peak RSS: each one's own high-water mark, which counts the pages it shares with its parent; CPU: approximate"

/* What a sampled record's figures are (resmon.h, "Processes"), and what
 * the walk's count of processes is. */
#define SAMPLED_FIGURES                                                                                         \
    "CPU and peak RSS as of the last sample that read each process (an exited one may have run up to an "      \
    "interval more); pid, parent, name and times from /proc"
#define SAMPLED_SEEN                                                                                            \
    "a lower bound: a process that lived less than an interval between two samples may never be seen (its "    \
    "CPU is in its reaper's wait4 figure)"

/* How many names the table shows (the JSON has them all). */
#define TABLE_NAMES 5
/* The name column: a kernel's command name (15 bytes) as printed, padded
 * or cut to it so the figures after it stay aligned whatever it holds. */
#define NAME_COLUMNS 16

static void put_number(FILE *out, const char *key, double value)
{
    char number[32];
    rm__json_format_double(value, number); /* NAN: null */
    fprintf(out, "\"%s\": %s", key, number);
}

static void write_record(FILE *out, const process_record *p)
{
    fprintf(out, "{\"pid\": %d, \"ppid\": %d, \"comm\": ", (int)p->pid, (int)p->ppid);
    json_write_string(out, p->comm);
    process_figure figures[PROCESS_FIGURES];
    process_record_figures(p, figures);
    for (size_t i = 0; i < PROCESS_FIGURES; i++) {
        char number[32];
        process_figure_format(&figures[i], number); /* counts as integers, as in the processes file */
        fprintf(out, ", \"%s\": %s", figures[i].key, number);
    }
    /* One of the two is null: the code it exited with, or the signal that
     * ended it (both null: unknown). */
    fputs(", \"exit_code\": ", out);
    if (p->exit_code >= 0)
        fprintf(out, "%d", p->exit_code);
    else
        fputs("null", out);
    fputs(", \"signal\": ", out);
    if (p->signal > 0)
        fprintf(out, "%d", p->signal);
    else
        fputs("null", out);
    fprintf(out, ", \"threads\": %d, \"source\": \"%s\"}", p->threads, p->source);
}

/* --processes all: each record after the one before. */
typedef struct record_list {
    FILE *out;
    unsigned long written;
} record_list;

static void list_record(const process_record *p, void *user)
{
    record_list *list = user;
    if (list->written++)
        fputs(", ", list->out);
    write_record(list->out, p);
}

static void write_records(FILE *out, const char *key, const process_record *records, size_t count)
{
    fprintf(out, ", \"%s\": [", key);
    for (size_t i = 0; i < count; i++) {
        if (i)
            fputs(", ", out);
        write_record(out, &records[i]);
    }
    fputc(']', out);
}

/* 1 when this process is in a user namespace other than the initial one,
 * whose uid_map alone maps every uid to itself.  (A pid namespace cannot be
 * told from inside as simply: a container's own /proc shows one level of
 * NSpid, and the initial namespaces' inode numbers are not fixed on every
 * kernel: 478180, not PROC_PID_INIT_INO, on a 6.18 where taskstats listened.) */
static int in_other_user_namespace(void)
{
    FILE *f = fopen("/proc/self/uid_map", "re");
    if (!f)
        return 0;
    unsigned long inside, outside, count;
    int initial = fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3 && inside == 0 && outside == 0 &&
                  count == 4294967295ul && fgetc(f) == '\n' && fgetc(f) == EOF;
    fclose(f);
    return !initial;
}

/* Why per-process figures are missing, in a few words; "" when they are not. */
static const char *unavailable_reason(int source_error)
{
    switch (-source_error) {
    case 0:
        return "";
    case EPERM:
    case EACCES:
        return "taskstats needs CAP_NET_ADMIN (root)";
    case ENOENT:
        return "the kernel has no taskstats here (CONFIG_TASKSTATS, or another network namespace)";
    case EINVAL:
        /* The kernel's answer to a listener outside the initial user or pid
         * namespace (add_del_listener); the CPU mask is the online CPUs'. */
        if (in_other_user_namespace())
            return "taskstats serves only the initial user namespace, and resmon runs in another (a container or "
                   "rootless: run it in the host's)";
        return "taskstats serves only the initial pid namespace, and resmon runs in another (a container: run it "
               "in the host's)";
    case ENETUNREACH:
        return "taskstats delivers no record to this network namespace (a container, PrivateNetwork=)";
    default:
        return strerror(-source_error);
    }
}

void processes_write_json(FILE *out, const run_result *r)
{
    if (!r->processes)
        return;
    process_totals t;
    process_records_totals(r->processes, &t);
    fprintf(out, ", \"processes\": {\"source\": \"%s\", \"count\": %lu, ", t.source, t.count);
    put_number(out, "cpu_sec", t.cpu_sec);
    fprintf(out, ", \"unattributed\": %lu, \"overruns\": %llu, \"exited_nonzero\": %lu, \"signaled\": %lu, "
                 "\"top_n\": %d", t.unattributed, t.overruns, t.exited_nonzero, t.signaled, PROCESS_TOP_N);
    if (t.unfolded)
        fprintf(out, ", \"unfolded_thread_records\": %lu", t.unfolded);
    if (!t.source_error && r->have_rusage) {
        /* A record is taken as the task exits, before its memory and files
         * are released: that last work is in wait4's figure only. */
        fputs(", ", out);
        put_number(out, "cpu_sec_after_records", r->rusage_cpu_sec - t.cpu_sec);
    }
    if (t.source_error) {
        fputs(", \"unavailable\": ", out);
        json_write_string(out, unavailable_reason(t.source_error));
    }
    if (t.sampled) { /* the walk's records, apart from count and cpu_sec: their CPU is in wait4's */
        fprintf(out, ", \"sampled\": {\"seen\": %llu, \"records\": %lu, ", t.sampled_seen, t.sampled_count);
        put_number(out, "cpu_sec", t.sampled_cpu_sec);
        fputs(", \"figures\": ", out);
        json_write_string(out, SAMPLED_FIGURES);
        fputs(", \"seen_is\": ", out);
        json_write_string(out, SAMPLED_SEEN);
        fputc('}', out);
    }
    const process_aggregate *names;
    size_t name_count = process_records_by_name(r->processes, &names);
    fputs(", \"by_name\": [", out);
    for (size_t i = 0; i < name_count; i++) {
        fputs(i ? ", {\"comm\": " : "{\"comm\": ", out);
        json_write_string(out, names[i].comm);
        fprintf(out, ", \"count\": %lu, ", names[i].count);
        put_number(out, "cpu_sec", names[i].cpu_sec);
        fputs(", ", out);
        put_number(out, "peak_rss_mb", names[i].peak_rss_mb);
        fprintf(out, ", \"peak_pid\": %d, \"source\": \"%s\"}", (int)names[i].peak_pid, names[i].source);
    }
    fputc(']', out);
    const process_record *top;
    size_t n = process_records_top_rss(r->processes, &top);
    write_records(out, "top_by_peak_rss", top, n);
    n = process_records_top_cpu(r->processes, &top);
    write_records(out, "top_by_cpu", top, n);
    if (t.keep_all) { /* --processes all */
        record_list list = {out, 0};
        fputs(", \"records\": [", out);
        long lost = process_records_each(r->processes, list_record, &list);
        fputc(']', out);
        process_records_totals(r->processes, &t); /* the file's last flush may have failed */
        /* Every record or, said here, how many are missing and why: the
         * list is never short without a word. */
        unsigned long kept = t.count + t.sampled_count;
        fprintf(out, ", \"records_missing\": %lu", kept - (list.written < kept ? list.written : kept));
        if (lost != 0 || list.written < kept) {
            int err = lost < 0 ? (int)lost : t.keep_all_error ? t.keep_all_error : -EIO;
            fputs(", \"records_error\": ", out);
            char why[160];
            snprintf(why, sizeof why, "the temporary file of every record (in $TMPDIR or /tmp): %s", strerror(-err));
            json_write_string(out, why);
        }
    }
    fputc('}', out);
}

/* How a process ended, when that is worth a word: "", "exit 3", "killed by SIGKILL". */
static void ending(const process_record *p, char *text, size_t size)
{
    const char *name = p->signal > 0 ? sigabbrev_np(p->signal) : NULL;
    if (p->signal > 0 && name)
        snprintf(text, size, "  killed by SIG%s", name);
    else if (p->signal > 0)
        snprintf(text, size, "  killed by signal %d", p->signal);
    else if (p->exit_code > 0)
        snprintf(text, size, "  exit %d", p->exit_code);
    else
        text[0] = '\0';
}

void processes_keep_all(process_records *records, const cli_options *o)
{
    int rc = process_records_keep_all(records);
    if (rc < 0 && !o->quiet) /* the JSON says it too, with how many are missing */
        fprintf(stderr, "resmon: --processes all: no temporary file for the records in $TMPDIR or /tmp (%s): "
                        "the JSON lists none\n", strerror(-rc));
}

/* "  (sampled)" after a figure from the walk when the run's source is
 * another: the reader tells the exact from the sampled on each line. */
static const char *source_note(const char *source, const process_totals *t)
{
    return t->sampled && strcmp(source, t->source) != 0 ? "  (sampled)" : "";
}

static void print_record(FILE *out, const char *label, const process_record *p, const process_totals *t)
{
    char end[48];
    ending(p, end, sizeof end);
    fprintf(out, "    %-12s ", label);
    print_printable_column(out, p->comm, NAME_COLUMNS);
    fprintf(out, " pid %-8d %8.1f MiB peak %9.3f s CPU%s%s\n", (int)p->pid, p->peak_rss_mb, p->cpu_sec, end,
            source_note(p->source, t));
}

void processes_print_table(FILE *out, const run_result *r)
{
    if (!r->processes)
        return;
    process_totals t;
    process_records_totals(r->processes, &t);
    if (t.source_error)
        fprintf(out, "  heaviest processes (wait4: the %lu resmon reaped, each with what it reaped; %s)\n", t.count,
                unavailable_reason(t.source_error));
    if (t.sampled)
        fprintf(out, "    the walk saw %llu process%s (%s); %lu kept, marked (sampled)\n    (sampled): %s\n",
                t.sampled_seen, t.sampled_seen == 1 ? "" : "es", SAMPLED_SEEN, t.sampled_count, SAMPLED_FIGURES);
    else
        fprintf(out, "  heaviest processes (taskstats: %lu processes; %s)\n", t.count, OWN_PEAK);
    if (!t.source_error && r->have_rusage && r->rusage_cpu_sec > 0) {
        /* The kernel makes a record at the exit, reading the scheduler's
         * runtime as it stands: the time run since the scheduler last
         * added it up (at a tick or a switch: 1.6 ms of a 7.3 ms process
         * at HZ 250) and the exit's work after the record (0.7 ms; more
         * with more memory to free) are in wait4's figure only
         * (bench/taskstats_cpu_gap.c).  Short processes lose a large
         * share, so the table gives it, per process too. */
        double missing = r->rusage_cpu_sec - t.cpu_sec;
        fprintf(out, "    their own CPU sums to %.3f s (%.0f %%) of wait4's exact %.3f s for the whole tree; the other "
                     "%.3f s (%.1f ms a process) is in no record: the kernel makes one as the process exits, before "
                     "its exit's work and its run since the scheduler last counted (README, \"Which process?\")\n",
                t.cpu_sec, 100 * t.cpu_sec / r->rusage_cpu_sec, r->rusage_cpu_sec, missing > 0 ? missing : 0,
                t.count && missing > 0 ? missing / (double)t.count * 1e3 : 0.0);
    }
    if (t.unattributed || t.overruns)
        fprintf(out, "    %lu process%s not placed in the tree, %llu overrun%s of the kernel's records\n",
                t.unattributed, t.unattributed == 1 ? "" : "es", t.overruns, t.overruns == 1 ? "" : "s");
    if (t.keep_all_error) /* --processes all: the JSON says how many */
        fprintf(out, "    --processes all: the JSON's records are missing some (its temporary file in $TMPDIR or "
                     "/tmp: %s)\n", strerror(-t.keep_all_error));
    if (t.exited_nonzero || t.signaled)
        fprintf(out, "    %lu exited with a code other than 0, %lu %s killed by a signal\n", t.exited_nonzero,
                t.signaled, t.signaled == 1 ? "was" : "were");
    if (t.unfolded)
        fprintf(out, "    %lu thread record%s kept as processes: more than %d processes folding threads at once\n",
                t.unfolded, t.unfolded == 1 ? "" : "s", PROCESS_OPEN_MAX);
    const process_record *top;
    size_t n = process_records_top_rss(r->processes, &top);
    for (size_t i = 0; i < n; i++)
        print_record(out, i ? "" : "by peak RSS", &top[i], &t);
    n = process_records_top_cpu(r->processes, &top);
    for (size_t i = 0; i < n; i++)
        print_record(out, i ? "" : "by CPU", &top[i], &t);
    const process_aggregate *names;
    size_t name_count = process_records_by_name(r->processes, &names);
    for (size_t i = 0; i < name_count && i < TABLE_NAMES; i++) {
        fprintf(out, "    %-12s ", i ? "" : "by name");
        print_printable_column(out, names[i].comm, NAME_COLUMNS);
        fprintf(out, " %6lu process%s %9.3f s CPU  peak %.1f MiB (pid %d)%s\n", names[i].count,
                names[i].count == 1 ? "  " : "es", names[i].cpu_sec, names[i].peak_rss_mb, (int)names[i].peak_pid,
                source_note(names[i].source, &t));
    }
}
