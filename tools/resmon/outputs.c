/*
 * outputs.c -- the command's outputs as a set: opened (and checked) before
 * the command starts, fed each sample as it is taken, written when the run
 * ends -- or discarded, leaving every path as it was, when nothing ran.
 */
#include "outputs.h"
#include "chart.h"
#include "chart_png.h"
#include "chart_series.h"
#include "clocks.h"
#include "exporters.h"
#include "marks.h"
#include "options.h"
#include "output_file.h"
#include "output_paths.h"
#include "processes_file.h"
#include "run_result.h"
#include "samples_file.h"
#include "signals.h"
#include "summary_output.h"
#include "text_output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether path is written where it is (stdout, a device, a FIFO), with no
 * temporary file. */
static int written_in_place(const char *path)
{
    struct stat st;
    return strcmp(path, "-") == 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode));
}

static void chart_title(const cli_options *o, char *title, size_t cap);

int outputs_open(const cli_options *o, resmon_gpu *gpu, outputs *out)
{
    memset(out, 0, sizeof *out);
    out->gpu = gpu;
    const char *const paths[] = {o->summary_path, o->samples_path, o->plot_path, o->trace_path, o->processes_path,
                                 o->exporters.textfile_path};
    const char *const options[] = {"-o", "-s", "--plot", "--trace", "--processes-file", "--textfile"};
    if (output_paths_check_distinct(paths, options, sizeof paths / sizeof *paths) != 0)
        return -1;
    if (o->plot_path &&
        chart_output_check("resmon", o->plot_path, "--plot", out->plot_converter, sizeof out->plot_converter) < 0)
        return -1; /* a .png without rsvg-convert: before anything is created */
    output_file *files[] = {&out->summary, &out->samples_output, &out->plot, &out->trace_output,
                            &out->processes_output};
    const char *const what[] = {"summary file", "samples file", "plot file", "trace file", "processes file"};
    /* In-place outputs first: opening a FIFO may wait for its reader, and a
     * user who gives up (Ctrl-C) then leaves no temporary file behind. */
    for (int in_place = 1; in_place >= 0; in_place--)
        for (size_t i = 0; i < sizeof files / sizeof *files; i++)
            if (paths[i] && written_in_place(paths[i]) == in_place &&
                output_file_open(files[i], paths[i], what[i]) < 0)
                return -1;
    if (o->samples_path &&
        !(out->samples = samples_file_open(out->samples_output.fd, o->samples_path,
                                           resmon_gpu_device_count(gpu), outputs_wall_offset()))) {
        fprintf(stderr, "resmon: out of memory\n");
        return -1;
    }
    if (o->trace_path) {
        char title[512];
        chart_title(o, title, sizeof title);
        if (!(out->trace = trace_file_open(out->trace_output.fd, title, gpu != NULL))) {
            fprintf(stderr, "resmon: out of memory\n");
            return -1;
        }
    }
    if (o->processes_path && !(out->processes = processes_file_open(out->processes_output.fd, o->processes_path))) {
        fprintf(stderr, "resmon: out of memory\n");
        return -1;
    }
    if (o->plot_path && !(out->chart = chart_series_new())) {
        fprintf(stderr, "resmon: out of memory\n");
        return -1;
    }
    if (!o->pid && !o->watch_cgroup) { /* marks from the command's programs (resmon mark) */
        char why[256];
        if (!(out->marks = marks_open(why, sizeof why)) && !o->quiet)
            fprintf(stderr, "resmon: no marks from the command: %s\n", why);
    }
    int none;
    const char *label = o->pid ? NULL : o->watch_cgroup ? o->cgroup_path : o->argv[0]; /* NULL: the pid's comm */
    out->exporters = exporters_start(&o->exporters, o->interval_sec, label, o->pid, &none);
    return out->exporters || none ? 0 : -1;
}

resmon_options outputs_monitor_options(const cli_options *o, outputs *out)
{
    resmon_options opts = RESMON_OPTIONS_INIT;
    opts.sample_interval_sec = o->interval_sec;
    opts.gpu_profiler = resmon_gpu_profiler_of(out->gpu);
    opts.include_children = o->include_children;
    opts.metrics = o->metrics; /* --metrics: every group by default; PSS at most every 0.5 s */
    opts.max_samples = 1; /* every sample is streamed; the summary covers them all */
    opts.on_sample = outputs_on_sample;
    opts.on_sample_user = out;
    opts.cgroup_path = o->cgroup_path; /* --cgroup; run_command puts its own leaf here */
    return opts;
}

int outputs_monitor_new(outputs *out, const resmon_options *opts, resmon_monitor **m)
{
    int rc = resmon_monitor_new(m, opts);
    if (rc == 0) {
        out->monitor = *m;
        exporters_attach(out->exporters, *m);
        if (marks_start(out->marks, *m) < 0) { /* no thread: no marks, the run goes on */
            marks_close(out->marks);
            out->marks = NULL;
        }
    }
    return rc;
}

void outputs_monitor_free(outputs *out, resmon_monitor *m)
{
    marks_drain(out->marks);
    exporters_detach(out->exporters, m); /* they keep its final state */
    if (out->monitor == m)
        out->monitor = NULL;
    resmon_monitor_free(m);
}

void outputs_marks_drain(outputs *out)
{
    marks_drain(out->marks);
}

void outputs_collect_phases(outputs *out, const resmon_monitor *m, run_result *r)
{
    r->have_marks = out->marks != NULL;
    r->marks_dropped = marks_dropped(out->marks);
    ssize_t n = resmon_monitor_get_phases(m, NULL, 0, sizeof(resmon_phase));
    if (n > 0 && (out->phases = calloc((size_t)n, sizeof *out->phases)) != NULL) {
        n = resmon_monitor_get_phases(m, out->phases, (size_t)n, sizeof *out->phases);
        r->phases = out->phases;
        r->phase_count = n > 0 ? (size_t)n : 0;
    }
}

double outputs_wall_offset(void)
{
    /* Measured once: measured again at the end, the offset differed from
     * the samples file's by 26-52 ms under load on this VM (its wall clock
     * corrected meanwhile), and start_time missed the first row's
     * unix_time by that much. */
    static double offset;
    static int measured;
    if (!measured) {
        offset = clock_minus_monotonic_sec(CLOCK_REALTIME);
        measured = 1;
    }
    return offset;
}

double outputs_start_wall_epoch(const resmon_monitor *m)
{
    resmon_sample first; /* the oldest kept: the first, this soon after the start */
    if (resmon_monitor_get_samples(m, &first, 1, sizeof first) < 1)
        return clock_realtime_sec();
    return first.timestamp + outputs_wall_offset(); /* the samples file's unix_time of it, exactly */
}

void outputs_on_sample(const resmon_sample *s, void *user)
{
    outputs *out = user;
    /* Before the window can close: the sample may be the last, taken as
     * the command's exit was noticed, and a mark sent before the exit may
     * still be in the socket (one recv when it is empty). */
    marks_take_queued(out->marks);
    if (!out->have_first) {
        out->first_timestamp = s->timestamp;
        out->have_first = 1;
    }
    double elapsed = s->timestamp - out->first_timestamp;
    char phase[RESMON_PHASE_NAME_MAX] = "";
    int phases = out->monitor ? resmon_monitor_phase(out->monitor, phase, sizeof phase) : 0;
    if (out->samples) {
        resmon_gpu_reading devices[RESMON_CLI_MAX_DEVICE_COLUMNS];
        ssize_t count = out->gpu && resmon_gpu_device_count(out->gpu) > 1
                            ? resmon_gpu_last_readings(out->gpu, devices, RESMON_CLI_MAX_DEVICE_COLUMNS, sizeof *devices)
                            : 0;
        if (count < 0)
            count = 0;
        size_t shown = (size_t)count < RESMON_CLI_MAX_DEVICE_COLUMNS ? (size_t)count : RESMON_CLI_MAX_DEVICE_COLUMNS;
        samples_file_write(out->samples, s, elapsed, devices, shown, phase);
    }
    trace_file_sample(out->trace, s, out->monitor); /* accepts NULL */
    if (out->chart && phases > 0)
        chart_series_phase(out->chart, phase, elapsed);
    if (out->chart)
        chart_series_add(out->chart, s, elapsed);
}

void outputs_command_started(outputs *out)
{
    /* The samples file is read while the run goes on (tail -f), so it takes
     * its name as soon as the command runs, not at the end.  Not before: a
     * command that cannot be started (127) leaves an existing file as it
     * was.  A name that cannot be taken is said now, once, and that
     * output's end fails (output_file_publish): the status is 125 unless
     * the command failed, and the other outputs are still written, as for
     * any output that cannot be written. */
    output_file_publish_early(&out->samples_output);
    output_file_publish_early(&out->processes_output);
    output_file_publish_early(&out->trace_output); /* the same for the timeline */
}

void outputs_discard(outputs *out)
{
    stream_outcome nothing_written;
    samples_file_close(out->samples, NULL, &nothing_written);
    out->samples = NULL;
    output_file_discard(&out->summary);
    output_file_discard(&out->samples_output);
    processes_file_close(out->processes, NULL, &nothing_written);
    out->processes = NULL;
    output_file_discard(&out->processes_output);
    output_file_discard(&out->plot);
    trace_file_finish(out->trace, NULL, NULL, NULL, &nothing_written);
    out->trace = NULL;
    output_file_discard(&out->trace_output);
    chart_series_free(out->chart);
    out->chart = NULL;
    exporters_discard(out->exporters);
    out->exporters = NULL;
    marks_close(out->marks);
    out->marks = NULL;
    free(out->phases);
    out->phases = NULL;
}

static void chart_title(const cli_options *o, char *title, size_t cap)
{
    if (o->watch_cgroup) {
        snprintf(title, cap, "resmon \xe2\x80\x94 cgroup %s", o->cgroup_path);
        return;
    }
    if (o->pid) {
        snprintf(title, cap, "resmon \xe2\x80\x94 process %d%s", (int)o->pid,
                 o->include_children ? " and descendants" : "");
        return;
    }
    /* A long command line is cut with an ellipsis, never silently: the
     * trace's process name is this title. */
    char *line = words_joined(o->argc, o->argv);
    char *full = NULL;
    if (line && asprintf(&full, "resmon \xe2\x80\x94 %s", line) >= 0)
        text_cut(title, cap, full);
    else
        text_cut(title, cap, "resmon");
    free(full);
    free(line);
}

/* The last byte of the regular file open as fd, at offset end - 1.  "> log"
 * opens it write-only, so fd cannot be read: the file is opened again for
 * reading through /proc (the same file, checked by device and inode).  -1
 * when it cannot be read at all (no read permission). */
static int last_byte_of(int fd, const struct stat *st, off_t end)
{
    char last;
    if (pread(fd, &last, 1, end - 1) == 1)
        return (unsigned char)last;
    if (errno != EBADF)
        return -1;
    char path[40];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int again = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (again < 0)
        return -1;
    struct stat st_again;
    int byte = -1;
    if (fstat(again, &st_again) == 0 && st_again.st_dev == st->st_dev && st_again.st_ino == st->st_ino &&
        pread(again, &last, 1, end - 1) == 1)
        byte = (unsigned char)last;
    close(again);
    return byte;
}

/* "-o -": the JSON is one line that ends with a newline.  stdout is shared
 * with the command, whose output may not end with one; where stdout is a
 * regular file resmon can look, and starts the JSON on a line of its own.
 * Where the file is appended to (">> log") the JSON goes at its end, whatever
 * the shared offset says (it stays 0 until someone writes). */
void output_start_on_own_line(FILE *stdout_stream)
{
    struct stat st;
    fflush(stdout_stream);
    int fd = fileno(stdout_stream);
    if ((fd != STDOUT_FILENO && fd != STDERR_FILENO) || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    int flags = fcntl(fd, F_GETFL);
    off_t end = flags >= 0 && (flags & O_APPEND) ? st.st_size : lseek(fd, 0, SEEK_CUR);
    if (end > 0 && end <= st.st_size) {
        /* A file resmon may write and not read (mode 0200, another
         * user's): a blank line is harmless to a reader of lines, a
         * summary glued to the command's last line is not. */
        if (last_byte_of(fd, &st, end) != '\n')
            fputc('\n', stdout_stream);
    }
    fflush(stdout_stream); /* before the output's own stream writes fd 1 */
}

/* The chart, as SVG or (through rsvg-convert, within wait's deadline) PNG.
 * 0, or -1 (printed). */
static int write_plot(const cli_options *o, outputs *out, const run_result *r, reader_wait *wait)
{
    char title[512];
    chart_title(o, title, sizeof title);
    if (!out->plot_converter[0]) {
        chart_write_svg(out->chart, out->plot.stream, title, r, o->interval_sec);
        return output_file_publish(&out->plot);
    }
    char why[512];
    errno = 0;
    FILE *svg = chart_png_begin();
    int converted = 0, drawn = 0;
    if (!svg) {
        snprintf(why, sizeof why, "cannot render the chart: %s", strerror(errno ? errno : ENOMEM));
    } else if ((drawn = chart_write_svg(out->chart, svg, title, r, o->interval_sec)) != 0) {
        snprintf(why, sizeof why, "cannot render the chart: %s", strerror(-drawn));
        fclose(svg);
    } else {
        converted = chart_png_finish(svg, out->plot_converter, out->plot.stream, wait, why, sizeof why) == 0;
    }
    if (converted)
        return output_file_publish(&out->plot);
    fputs("resmon: cannot write plot file '", stderr);
    print_printable(stderr, o->plot_path);
    fputs("': ", stderr);
    print_printable(stderr, why);
    fputc('\n', stderr);
    output_file_discard(&out->plot);
    return -1;
}

/* The end of an output written as the run went (samples, trace, processes):
 * what its writer could not write in one line -- a failed write's error, or
 * a reader (a FIFO's, a pipe's) that did not take it all -- then the file
 * takes its name.  Returns 0, or -1 when either failed. */
static int finish_stream(const stream_outcome *outcome, const char *what, const char *path, const char *unit,
                         output_file *file)
{
    int rc = 0;
    if (file && file->given_up)
        return output_file_publish(file); /* its one line was said when its name could not be taken */
    if (outcome->error < 0 || outcome->reader_stuck) {
        fprintf(stderr, "resmon: error writing %s '", what);
        print_printable(stderr, path);
        if (outcome->error < 0 && file && (file->is_stdout || file->is_stderr))
            fprintf(stderr, "': %s (written where standard %s stands, which the command writes too: not cut "
                    "back, its last %s may be partial)\n", strerror(-outcome->error),
                    file->is_stdout ? "output" : "error", unit);
        else if (outcome->error < 0)
            fprintf(stderr, "': %s (the file ends with the last whole %s written)\n", strerror(-outcome->error),
                    unit);
        else
            fprintf(stderr, "': %s; %lu %s%s not written\n", outcome->stuck_why, outcome->lines_lost, unit,
                    outcome->lines_lost == 1 ? "" : "s");
        rc = -1;
    }
    return rc | output_file_publish(file);
}

void outputs_settle_start(const outputs *out, run_result *r)
{
    /* The first sample's wall clock, as the samples file's first unix_time,
     * taken now that the sampler is joined: read at the start, the
     * one-sample ring of a command's run could already hold a later sample
     * (start_time 85 ms after the first row on a loaded TSan run: four
     * 20 ms intervals). */
    if (out->have_first)
        r->start_wall_epoch = out->first_timestamp + outputs_wall_offset();
}

int outputs_finish(const cli_options *o, outputs *out, const run_result *run)
{
    int rc = 0;
    run_result counted = *run;
    outputs_settle_start(out, &counted);
    if (out->marks) /* marks dropped after the window (an orphan's, --wait-orphans) count too */
        counted.marks_dropped = marks_dropped(out->marks);
    const run_result *r = &counted;
    marks_drain(out->marks); /* (done already) from here every mark is refused, and counted: read again below */
    /* A stuck reader is waited for while it reads, and not past a signal
     * resmon received: the files after it, and the summary, still come.
     * One wait for every output, so stuck readers cost its bound once. */
    reader_wait wait;
    reader_wait_init(&wait, signals_stop_fd(), signals_received() != 0);
    output_file_wait_with(&out->plot, &wait);
    output_file_wait_with(&out->summary, &wait);
    stream_outcome outcome;
    if (out->samples) {
        samples_file_close(out->samples, &wait, &outcome);
        out->samples = NULL;
        rc |= finish_stream(&outcome, "samples file", o->samples_path, "row", &out->samples_output);
    }
    if (out->trace) {
        trace_file_finish(out->trace, o, r, &wait, &outcome);
        out->trace = NULL;
        rc |= finish_stream(&outcome, "trace file", o->trace_path, "event", &out->trace_output);
    }
    if (out->processes) {
        processes_file_close(out->processes, &wait, &outcome);
        out->processes = NULL;
        rc |= finish_stream(&outcome, "processes file", o->processes_path, "row", &out->processes_output);
    }
    if (out->plot.stream)
        rc |= write_plot(o, out, r, &wait);
    chart_series_free(out->chart);
    out->chart = NULL;
    /* The files above may have taken seconds (a reader that reads slowly):
     * a mark refused meanwhile is counted in the summary and the table. */
    if (out->marks) {
        marks_seal(out->marks); /* no sender counts after this read: its drop would be in no summary */
        counted.marks_dropped = marks_dropped(out->marks);
    }
    if (out->summary.stream) {
        if (out->summary.is_stdout || out->summary.is_stderr)
            output_start_on_own_line(out->summary.is_stdout ? stdout : stderr);
        summary_write_json(out->summary.stream, o, r);
        rc |= output_file_publish(&out->summary);
    }
    if (!o->quiet)
        summary_print_table(stderr, o, r);
    marks_close(out->marks); /* the channel's directory goes before the exporters linger */
    out->marks = NULL;
    if (exporters_finish(out->exporters, &r->summary, r->have_exit, r->exit_status) < 0) /* after the files: it may linger */
        rc |= -1;
    out->exporters = NULL;
    free(out->phases);
    out->phases = NULL;
    return rc;
}
