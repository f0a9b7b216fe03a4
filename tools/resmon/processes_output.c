/*
 * processes_output.c -- every process of the run in the summary JSON
 * ("processes") and the table ("heaviest processes"), from the bounded
 * records of process_records.c.
 */
#include "processes_output.h"
#include "text_output.h"
#include "json_number.h"
#include "process_records.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* What a taskstats record's peak is: the process's own VmHWM, which a
 * forked child starts with the pages it shares with its parent (two idle
 * workers of a parent that touched 200 MiB showed 204.8 MiB each): its
 * high-water mark, not what it added, and not "exact" for what it used. */
#define OWN_PEAK                                                                                                \
    "peak RSS: each one's own high-water mark, which counts the pages it shares with its parent; CPU: approximate"

/* How many names the table shows (the JSON has them all). */
#define TABLE_NAMES 5

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
    const struct {
        const char *key;
        double value;
    } numbers[] = {
        {"start_sec", p->start_sec},
        {"end_sec", p->end_sec},
        {"cpu_user_sec", p->cpu_user_sec},
        {"cpu_sys_sec", p->cpu_sys_sec},
        {"peak_rss_mb", p->peak_rss_mb},
        {"read_bytes", p->read_bytes},
        {"write_bytes", p->write_bytes},
        {"minor_faults", p->minor_faults},
        {"major_faults", p->major_faults},
        {"voluntary_switches", p->voluntary_switches},
        {"involuntary_switches", p->involuntary_switches},
    };
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        fputs(", ", out);
        put_number(out, numbers[i].key, numbers[i].value);
    }
    fprintf(out, ", \"exit_code\": %d, \"threads\": %d, \"source\": \"%s\"}", p->exit_code, p->threads, p->source);
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
    fprintf(out, ", \"unattributed\": %lu, \"overruns\": %llu, \"top_n\": %d", t.unattributed, t.overruns,
            PROCESS_TOP_N);
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
        fprintf(out, ", \"peak_pid\": %d}", (int)names[i].peak_pid);
    }
    fputc(']', out);
    const process_record *top;
    size_t n = process_records_top_rss(r->processes, &top);
    write_records(out, "top_by_peak_rss", top, n);
    n = process_records_top_cpu(r->processes, &top);
    write_records(out, "top_by_cpu", top, n);
    fputc('}', out);
}

static void print_record(FILE *out, const char *label, const process_record *p)
{
    fprintf(out, "    %-12s ", label);
    print_printable(out, p->comm);
    size_t len = strlen(p->comm);
    fprintf(out, "%*s pid %-8d %8.1f MiB peak %9.3f s CPU\n", (int)(len < 16 ? 16 - len : 0), "", (int)p->pid,
            p->peak_rss_mb, p->cpu_user_sec + p->cpu_sys_sec);
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
    else
        fprintf(out, "  heaviest processes (taskstats: %lu processes; %s)\n", t.count, OWN_PEAK);
    if (!t.source_error && r->have_rusage)
        fprintf(out, "    their own CPU sums to %.3f s of wait4's exact %.3f s for the whole tree: a record is "
                     "the kernel's at the process's exit, before its last work (README, \"Which process?\")\n",
                t.cpu_sec, r->rusage_cpu_sec);
    if (t.unattributed || t.overruns)
        fprintf(out, "    %lu process%s not placed in the tree, %llu overrun%s of the kernel's records\n",
                t.unattributed, t.unattributed == 1 ? "" : "es", t.overruns, t.overruns == 1 ? "" : "s");
    if (t.unfolded)
        fprintf(out, "    %lu thread record%s kept as processes: more than %d processes folding threads at once\n",
                t.unfolded, t.unfolded == 1 ? "" : "s", PROCESS_OPEN_MAX);
    const process_record *top;
    size_t n = process_records_top_rss(r->processes, &top);
    for (size_t i = 0; i < n; i++)
        print_record(out, i ? "" : "by peak RSS", &top[i]);
    n = process_records_top_cpu(r->processes, &top);
    for (size_t i = 0; i < n; i++)
        print_record(out, i ? "" : "by CPU", &top[i]);
    const process_aggregate *names;
    size_t name_count = process_records_by_name(r->processes, &names);
    for (size_t i = 0; i < name_count && i < TABLE_NAMES; i++) {
        fprintf(out, "    %-12s ", i ? "" : "by name");
        print_printable(out, names[i].comm);
        size_t len = strlen(names[i].comm);
        fprintf(out, "%*s %6lu process%s %9.3f s CPU  peak %.1f MiB (pid %d)\n", (int)(len < 16 ? 16 - len : 0), "",
                names[i].count, names[i].count == 1 ? "  " : "es", names[i].cpu_sec, names[i].peak_rss_mb,
                (int)names[i].peak_pid);
    }
}
