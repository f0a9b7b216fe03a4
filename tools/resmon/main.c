/*
 * main.c -- the resmon command: run a command (or attach to a process), monitor
 * its process tree with libresmon, and report.
 */
#include "attach.h"
#include "child.h"
#include "cli.h"
#include "compare.h"
#include "marks.h"
#include "options.h"
#include "output_file.h"
#include "outputs.h"
#include "plot_command.h"
#include "repeat.h"
#include "text_output.h"
#include "run_result.h"
#include "signals.h"
#include "process_records.h"
#include "processes_output.h"
#include "processes_file.h"
#include "trace_file.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A signal ignored at start is not forwarded: else kill -INT would seem to
 * do nothing, with no word why. */
static void note_ignored_signals(const cli_options *o)
{
    char ignored[64];
    int ignored_count = signals_ignored_at_start(ignored, sizeof ignored);
    if (ignored_count && !o->quiet)
        fprintf(stderr, "resmon: %s ignored when resmon started (a background job?): %s\n", ignored,
                o->pid || o->watch_cgroup ? "resmon does not stop on it" : "not forwarded to the command");
}

/* Where each kept process record goes: --processes-file's row and, with
 * --trace, the process's slice on the timeline. */
typedef struct record_sinks {
    processes_file *file;
    trace_file *trace;
    const run_result *run; /* the records' time base, and the command's pid */
} record_sinks;

/* Called with the records' lock held, after child.c stored the command's
 * pid and start under it (process_records_start). */
static void record_to_sinks(const process_record *rec, void *user)
{
    const record_sinks *sinks = user;
    if (sinks->file)
        processes_file_write(rec, sinks->file);
    /* The command's own slice comes at the end from its wait4 (trace_file.c,
     * with its command line and status); a record without its times (wait4
     * knows no start) has no place on a timeline. */
    if (!sinks->trace || rec->pid == sinks->run->command_pid || isnan(rec->start_sec) || isnan(rec->end_sec))
        return;
    trace_process slice = {
        .pid = (int)rec->pid,
        .ppid = (int)rec->ppid,
        .name = rec->comm,
        .start_timestamp = sinks->run->command_start_timestamp + rec->start_sec,
        .end_timestamp = sinks->run->command_start_timestamp + rec->end_sec,
        .cpu_sec = rec->cpu_sec,
        .peak_rss_mb = rec->peak_rss_mb,
        .exit_code = rec->exit_code,
        .term_signal = rec->signal,
        .source = rec->source,
    };
    trace_file_processes(sinks->trace, &slice, 1);
}

int main(int argc, char **argv)
{
    signals_block_write_faults();
    standard_fds_occupy();
    run_note_start_limits();
    if (argc > 1 && strcmp(argv[1], "plot") == 0) /* a program named plot runs as "resmon -- plot" */
        return plot_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "compare") == 0) /* a program named compare: resmon -- compare */
        return compare_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "mark") == 0) /* a program named mark: resmon -- mark */
        return mark_main(argc - 1, argv + 1);
    cli_options o;
    int rc = cli_parse(argc, argv, &o);
    if (rc == -1)
        return stdout_close("resmon");
    if (rc != 0)
        return rc;
    if (o.pid && (rc = attach_check_target(o.pid)) != 0)
        return rc; /* before any output is opened */
    /* A GPU named on the command line must open; "auto" finds one or none. */
    resmon_gpu *gpu = NULL;
    if (strcmp(o.gpu, "none") != 0) {
        char err[RESMON_ERR_MAX];
        rc = resmon_gpu_open(&gpu, o.gpu, err, sizeof err);
        if (rc < 0 && strcmp(o.gpu, "auto") != 0) {
            fputs("resmon: --gpu ", stderr); /* both as given: a selector may hold anything */
            print_printable(stderr, o.gpu);
            fputs(": ", stderr);
            print_printable(stderr, err);
            fputc('\n', stderr);
            return EXIT_USAGE;
        }
        /* A GPU is there, but which one a CUDA job uses is unclear; or a CUDA
         * job expects a GPU, and none was picked: say what was looked for.  (On
         * a machine without GPUs and without CUDA_VISIBLE_DEVICES, "auto" stays
         * quiet.)  The reason may quote CUDA_VISIBLE_DEVICES: shown printable. */
        if ((rc < 0 && rc != -ENODEV) || (rc == -ENODEV && getenv("CUDA_VISIBLE_DEVICES") && !o.quiet)) {
            fputs("resmon: no GPU measured: ", stderr);
            print_printable(stderr, err);
            fputc('\n', stderr);
        } else if (rc == 0 && *resmon_gpu_selection(gpu) && !o.quiet) /* what "auto"/"all" picked, and why */
            fprintf(stderr, "resmon: GPU %s\n", resmon_gpu_selection(gpu));
    }
    if (o.repeat) { /* --repeat: the runs, their outputs and the table are repeat.c's */
        note_ignored_signals(&o);
        rc = repeat_main(&o, gpu);
        resmon_gpu_close(gpu);
        return rc;
    }
    outputs out;
    if (outputs_open(&o, gpu, &out) < 0) {
        outputs_discard(&out);
        resmon_gpu_close(gpu);
        return EXIT_USAGE;
    }
    note_ignored_signals(&o);
    run_result r;
    memset(&r, 0, sizeof r);
    r.wait4_maxrss_mb = NAN; /* set by run_command when a sample saw more */
    r.memory_limit_at_end_mb = NAN;
    r.swap_allowed_at_end_mb = NAN;
    r.gpu = gpu;
    int attached = o.pid || o.watch_cgroup; /* resmon did not start what it monitors */
    if (!attached && o.include_children) /* out of memory: the run goes on without them */
        r.processes = process_records_new(getpid());
    if (r.processes && o.processes_all)
        processes_keep_all(r.processes, &o);
    record_sinks sinks = {out.processes, out.trace, &r};
    if (r.processes && (out.processes || out.trace)) /* each record as it is kept */
        process_records_on_record(r.processes, record_to_sinks, &sinks);
    rc = attached ? attach_process(&o, &out, &r) : run_command(&o, &out, &r);
    if (rc != 0) {
        process_records_free(r.processes);
        outputs_discard(&out);
        resmon_gpu_close(gpu);
        return rc;
    }
    rc = outputs_finish(&o, &out, &r);
    process_records_free(r.processes);
    resmon_gpu_close(gpu);
    if (rc < 0)
        return attached ? EXIT_USAGE : (r.exit_status ? r.exit_status : EXIT_USAGE);
    if (!attached && !r.have_exit)
        return EXIT_USAGE; /* the status is unknown: never report success */
    return attached ? 0 : r.exit_status;
}
