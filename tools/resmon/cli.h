/*
 * cli.h -- the resmon command's parts and what they share.
 *
 * The command is a thin layer over libresmon: it starts (or attaches to) the
 * target, opens a monitor of its process tree, streams each sample to the
 * samples file and to a thinned series for the chart, and writes the outputs
 * when the target ends.  Every sample comes from the library's one sampling
 * path; the command adds only what a monitor of a child can know: its exit
 * status and the kernel's exact accounting from wait4().
 */
#ifndef RESMON_CLI_H
#define RESMON_CLI_H

#include "exporters.h"
#include "resmon.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit statuses of resmon's own failures, as timeout(1) and env(1) use them. */
enum cli_exit {
    EXIT_USAGE = 125,          /* bad usage, unwritable output, bad --pid */
    EXIT_CANNOT_EXECUTE = 126, /* found but not executable */
    EXIT_NOT_FOUND = 127       /* command not found */
};

typedef struct cli_options {
    double interval_sec;
    const char *summary_path; /* -o: NULL none, "-" stdout */
    const char *samples_path; /* -s: .csv or .jsonl */
    const char *plot_path;    /* --plot: .svg */
    const char *gpu;          /* --gpu: "auto", "none" */
    int include_children;
    double duration_sec;      /* --duration with --pid; 0 = until it ends */
    int quiet;
    int wait_orphans;         /* --wait-orphans: wait for adopted descendants */
    int reset_peak;           /* --reset-peak: reset the --pid target's peak mark */
    unsigned metrics;         /* --metrics: RESMON_METRIC_* groups (default all) */
    pid_t pid;                /* --pid; 0 = run argv */
    exporter_options exporters; /* --serve, --push, --textfile, --label */
    int no_cgroup;            /* --no-cgroup: never make a cgroup for COMMAND */
    uint64_t memory_limit_bytes; /* --memory-limit; 0 = none */
    const char *cgroup_path;  /* --cgroup: an existing cgroup to read */
    int watch_cgroup;         /* --cgroup without COMMAND or --pid: its processes are the tree */
    long repeat;              /* --repeat N: measured runs; 0 = one ordinary run */
    long warmup;              /* --warmup K: unmeasured runs before them */
    int ignore_failure;       /* --ignore-failure: a failed run does not stop the repeat */
    char **argv;              /* the command, NULL-terminated */
    int argc;
    const char *processes_path; /* --processes-file: .csv or .jsonl */
} cli_options;

/* Parses the command line.  Returns 0, or prints one line to stderr and
 * returns EXIT_USAGE; returns -1 after printing --help or --version (exit 0). */
int cli_parse(int argc, char **argv, cli_options *out);

/* ---- what a run produced, for the outputs ---- */
typedef struct run_result {
    resmon_summary summary;
    double start_wall_epoch;   /* time(2) of the first sample, for ISO 8601 */
    double wall_sec;           /* from the first sample to the target's end */
    int have_exit;             /* 1 when we ran the command and reaped it */
    int exit_status;           /* as the shell sees it: code, or 128 + signal */
    int term_signal;           /* 0 unless a signal ended it */
    int have_rusage;
    double rusage_cpu_sec;     /* user + system of the command and all it reaped */
    double rusage_maxrss_mb;   /* largest single process's peak RSS */
    double wait4_maxrss_mb;    /* wait4's figure when a sample saw one process above it
                                  (its mark reset, or it was never reaped); else NAN */
    double rusage_nvcsw, rusage_nivcsw; /* context switches (voluntary,
                                  involuntary) of the command and all it and
                                  resmon reaped */
    int interrupted;           /* resmon got SIGINT/SIGTERM/SIGHUP/SIGQUIT */
    int orphans_left;          /* adopted descendants still running at the end */
    resmon_gpu *gpu;           /* the GPU profiler, NULL without */
    char cgroup_note[RESMON_ERR_MAX]; /* why no cgroup was made for COMMAND; "" when one was, or not asked */
    const resmon_phase *phases; /* the window's phases (owned by the outputs); NULL without marks */
    size_t phase_count;
    int have_marks;             /* the command had a marks channel */
    unsigned long long marks_dropped;
    /* ---- every process of the run (process_records.h, processes_output.c) ---- */
    struct process_records *processes; /* NULL: not kept (--pid, --cgroup, --repeat, --no-children) */
} run_result;

/* Per-device GPU columns are written for at most this many devices. */
#define RESMON_CLI_MAX_DEVICE_COLUMNS 16

/* ---- samples file: CSV or JSON Lines, written as samples arrive ---- */
typedef struct samples_file samples_file;
/* The metric-group columns, after CPU and RSS (and before any GPU's): the
 * library's metric list (resmon_metric_info) and the tree's cgroup memory,
 * in resmon_sample's order -- what the writer writes and the reader
 * (samples_read.c) reads, one list for both.  Each is a distinct double of
 * resmon_sample, so the sample's size bounds them. */
#define SAMPLES_MAX_METRIC_COLUMNS (sizeof(resmon_sample) / sizeof(double))
typedef struct samples_column {
    const char *name;
    size_t offset; /* a double in resmon_sample */
    int integral;  /* a count or bytes: written as an integer ("3", not "3.0") */
} samples_column;
/* Fills columns (SAMPLES_MAX_METRIC_COLUMNS of room); returns how many. */
size_t samples_metric_columns(samples_column *columns);
/* Writes rows to fd (which stays the caller's); the format comes from path's
 * extension.  gpu_devices: 0 no GPU columns; 1 the GPU columns; N > 1 also
 * per-device columns gpuI_*.  NULL when out of memory. */
samples_file *samples_file_open(int fd, const char *path, size_t gpu_devices);
void samples_file_write(samples_file *f, const resmon_sample *s, double elapsed_sec,
                        const resmon_gpu_reading *devices, size_t device_count, const char *phase);
/* Writes what is buffered and frees f; returns 0, or -errno of the first
 * failed write (the file then ends with the last whole row written). */
int samples_file_free(samples_file *f);

/* ---- chart: a thinned series of a run, and one renderer (chart.c) ---- */
typedef struct chart_series chart_series;
chart_series *chart_series_new(void);
void chart_series_add(chart_series *c, const resmon_sample *s, double elapsed_sec);
/* A phase named name starts at elapsed_sec (the previous one ends there);
 * the same name again goes on with it.  "" is time outside any named phase
 * (not drawn).  A name is kept to CHART_PHASE_NAME_MAX - 1 bytes; after
 * CHART_MAX_PHASES phases, later ones are counted, not kept, and the last
 * kept band runs on to the end ("+N more phases" under the strip). */
#define CHART_MAX_PHASES 64
#define CHART_PHASE_NAME_MAX 64
void chart_series_phase(chart_series *c, const char *name, double elapsed_sec);
/* Flushes the partly filled point: call once all samples are added. */
void chart_series_finish(chart_series *c);
size_t chart_series_samples(const chart_series *c);
void chart_series_free(chart_series *c);
/* CPUs in resmon's affinity mask (what a command it starts may use), or 0. */
int chart_cpus_available(void);

typedef struct chart_run {
    const chart_series *series; /* finished (chart_series_finish) */
    const char *label;          /* the legend's name; NULL with a subtitle */
    double end_sec;             /* where the run ends on the time axis */
} chart_run;
typedef struct chart_info {
    const char *title;
    const char *subtitle;          /* NULL: a line per run (label and figures) */
    int cpus;                      /* a capacity line at cpus x 100 %; 0: none */
    const char *cpus_source;       /* where cpus came from, for its label */
    double exact_peak_process_mb;  /* NAN: not drawn */
    const char *exact_peak_process_source; /* "wait4", "VmHWM" */
    double exact_peak_tree_mb;     /* the whole tree's exact peak (a cgroup's memory.peak); NAN: not drawn */
    const char *exact_peak_tree_source;
} chart_info;
/* Draws runs (one, or several overlaid with a colour each) as SVG; the time
 * axis ends at the latest end_sec.  Returns 0 or -errno. */
int chart_render_svg(FILE *out, const chart_info *info, const chart_run *runs, size_t count);
/* The live run's chart, from what the run produced.  Returns 0 or -errno. */
/* interval_sec: the asked interval, which the subtitle names. */
int chart_write_svg(const chart_series *c, FILE *out, const char *title, const run_result *r, double interval_sec);
/* Why the whole tree's exact peak (the cgroup's) can sit below the largest
 * process's RSS: the table and the chart say it where it happens. */
#define TREE_BELOW_RSS_NOTE                                                                                             \
    "below RSS: file pages already cached (libraries, binaries) are charged to the cgroup that first read them"

/* ---- chart as PNG: the SVG through rsvg-convert (chart_png.c) ---- */
/* Whether a chart written to path is PNG (a .png name, any case), SVG, or
 * refused; for PNG finds rsvg-convert on PATH into converter (else ""), and
 * refuses the name when it is missing.  Returns 0, or prints one line naming
 * option and path and returns -1. */
int chart_output_check(const char *path, const char *option, char *converter, size_t cap);
/* A stream to render the SVG into, for chart_png_finish; NULL (errno) on failure. */
FILE *chart_png_begin(void);
/* Converts what svg holds to PNG on out_fd and closes svg.  Returns 0, or
 * fills why with one line's worth and returns -1. */
int chart_png_finish(FILE *svg, const char *converter, int out_fd, char *why, size_t cap);

/* ---- saved samples files, read back (samples_read.c) ---- */
/* Feeds every row of a samples file written by -s (CSV or JSON Lines, by
 * extension; columns found by name, unknown ones ignored) to c, and its
 * phase column, if any, to chart_series_phase; *end_sec is the last
 * elapsed_sec.  Returns 0, or fills why (without the path) and returns -1. */
int samples_read(const char *path, chart_series *c, double *end_sec, char *why, size_t cap);

/* ---- resmon plot (plot_command.c) ---- */
/* argv[0] is "plot".  Returns the exit status. */
int plot_main(int argc, char **argv);

/* ---- marks from the command's programs (marks.c, phases_output.c) ---- */
/* The environment variable naming the marks socket to the command. */
#define RESMON_MARK_ENV "RESMON_MARK_SOCKET"
#define RESMON_MARK_DROPPED_ENV "RESMON_MARK_DROPPED" /* the drop counter: its name is a secret */
typedef struct marks_channel marks_channel;
/* Opens the channel and names it in resmon's environment (the command
 * inherits it).  NULL, with a line's worth in why, when it cannot. */
marks_channel *marks_open(char *why, size_t cap);
/* Hands every mark received from now on to m.  0 or -errno. */
int marks_start(marks_channel *c, resmon_monitor *m);
/* From the sample callback, on the sampler's thread: hands what was sent so
 * far to the monitor, so that a window the command's exit ends takes every
 * mark sent before the exit (the receiver thread may not have run yet). */
void marks_take_queued(marks_channel *c);
/* Takes what was sent so far and stops receiving (before the monitor stops). */
void marks_drain(marks_channel *c);
/* Marks dropped (by a full channel or refused by the library), and taken. */
unsigned long long marks_dropped(const marks_channel *c);
unsigned long long marks_taken(const marks_channel *c);
/* Removes the channel and its directory; accepts NULL. */
void marks_close(marks_channel *c);
/* 1 when name is a valid phase name (resmon_monitor_mark's rule). */
int mark_name_valid(const char *name);
/* resmon mark NAME: argv[0] is "mark".  Returns the exit status. */
int mark_main(int argc, char **argv);
/* The run's phases into the summary JSON ("phases", "marks_dropped") and the
 * table (a line per phase); nothing when the run had none. */
void phases_write_json(FILE *out, const run_result *r);
void phases_print_table(FILE *out, const run_result *r);

/* ---- repeated runs (repeat.c) ---- */
/* The most runs --repeat and --warmup take: more is surely a typo. */
#define REPEAT_MAX_RUNS 100000
/* Runs o->argv o->warmup times unmeasured, then o->repeat times measured,
 * each a full run; writes the multi-run JSON to o->summary_path and the
 * table of medians to stderr.  Returns the exit status. */
int repeat_main(const cli_options *o, resmon_gpu *gpu);

/* ---- every process of the run: table and JSON (processes_output.c) ---- */
/* ", \"processes\": {...}" into the summary JSON; nothing without records. */
void processes_write_json(FILE *out, const run_result *r);
/* "heaviest processes" lines of the table; nothing without records. */
void processes_print_table(FILE *out, const run_result *r);

/* ---- the summary: JSON file and the human table ---- */
int summary_write_json(FILE *out, const cli_options *o, const run_result *r);
void summary_print_table(FILE *out, const cli_options *o, const run_result *r);

/* ---- text from outside (argv, GPU names), which may not be UTF-8 ---- */
/* Writes text as a JSON string literal (quotes included): escapes what JSON
 * requires and writes each byte that is not valid UTF-8 as \ufffd. */
void json_write_string(FILE *out, const char *text);
/* Writes text as XML character data: escapes markup, replaces invalid UTF-8
 * with U+FFFD and drops the control characters XML 1.0 forbids. */
void xml_write_text(FILE *out, const char *text);
/* Writes text for a message on a terminal: control characters and bytes
 * that are not valid UTF-8 appear as \xNN. */
void print_printable(FILE *out, const char *text);
/* Closes stdout (help, version): 0, or EXIT_USAGE after one line, from
 * who ("resmon plot"), that names the failed write's errno. */
int stdout_close(const char *who);
/* The same into buf (cap bytes, always NUL-terminated, cut to fit). */
void printable_copy(char *buf, size_t cap, const char *text);
/* A malloc'ed copy of text with each byte that is not valid UTF-8 replaced
 * by U+FFFD; NULL when out of memory. */
char *utf8_repaired(const char *text);

/* ---- one output file (output_file.c) ---- */
typedef struct output_file {
    const char *path;  /* as given; "-" is stdout */
    const char *what;  /* "summary file", for messages */
    FILE *stream;      /* NULL when not open */
    char *temp_path;   /* resmon's temporary file until renamed; NULL when in place */
    char *final_path;  /* what the rename replaces (symbolic links resolved) */
    int silent;        /* set before opening: failures are not printed, only kept */
    int error;         /* the errno of the last failure */
    int fd;            /* the stream's descriptor (fileno() has none for it); -1 when closed */
    struct output_sink *sink; /* where the stream's failed write(2) keeps its errno; NULL for stdout */
} output_file;
/* Occupies closed descriptors 0, 1 and 2 with /dev/null, so no file resmon
 * opens later takes their place.  Call before opening anything. */
void standard_fds_occupy(void);
/* Opens path for writing, close-on-exec, leaving an existing file untouched
 * (see output_file.c).  Returns 0, or prints one line and returns -1. */
int output_file_open(output_file *f, const char *path, const char *what);
/* Gives a temporary file its final name now (the samples file, once the
 * command runs).  Returns 0, or prints one line and returns -1. */
int output_file_publish_early(output_file *f);
/* Flushes, closes and renames into place.  Returns 0, or prints one line
 * naming the error, removes the temporary file and returns -1. */
int output_file_publish(output_file *f);
/* Closes and removes resmon's temporary file; the path given is untouched. */
void output_file_discard(output_file *f);

/* Refuses outputs that name one file (options[i] names paths[i] in the
 * message; NULL paths are skipped).  Returns 0, or prints one line and
 * returns EXIT_USAGE. */
/* Whether path's name ends in ext (".png", ".csv"), in any case ("x.PNG"):
 * the one rule for every format resmon picks by a file's name.  A name that
 * is the extension alone (".png", "dir/.png") has it too: what is named
 * .png gets PNG, never SVG bytes; "dir.png/x" has none. */
int path_has_extension(const char *path, const char *ext);
int output_paths_check_distinct(const char *const *paths, const char *const *options, size_t count);
/* The same check for a command that reads and writes (plot, compare):
 * paths[0, output_count) are outputs, the rest inputs; an output may name
 * neither another output nor an input (two inputs may be one file).  program
 * starts the message ("resmon plot").  Returns 0, or prints one line and
 * returns EXIT_USAGE. */
int output_paths_check(const char *program, const char *const *paths, const char *const *options,
                       size_t output_count, size_t count);

/* ---- what compare and plot read (input_file.c) ---- */
/* Opens path for reading: non-blocking, and only a regular file (a FIFO,
 * socket, device or directory is refused).  Returns the stream, or NULL with
 * why set ("a FIFO, not a regular file", strerror's words). */
FILE *input_file_open(const char *path, char *why, size_t cap);
/* Reads f whole into a NUL-terminated buffer the caller frees; more than
 * max_bytes is refused (why says so) having read max_bytes + 1 at most.
 * Returns 0 or -1. */
int input_file_slurp(FILE *f, size_t max_bytes, char **text, size_t *length, char *why, size_t cap);

/* ---- the command's outputs as a set (outputs.c) ---- */
typedef struct outputs {
    resmon_gpu *gpu; /* for per-device columns */
    output_file summary, samples_output, plot;
    samples_file *samples;
    chart_series *chart;
    exporters *exporters; /* --serve, --push, --textfile */
    char plot_converter[4096]; /* rsvg-convert for a .png chart, else "" */
    double first_timestamp;
    int have_first;
    marks_channel *marks;  /* COMMAND's marks channel; NULL with --pid or when it cannot open */
    const resmon_monitor *monitor; /* for the phase of each sample */
    resmon_phase *phases;  /* outputs_collect_phases */
    output_file processes_output; /* --processes-file */
    struct processes_file *processes; /* its rows (processes_file.h); NULL without */
} outputs;
/* Checks and opens every output named in o.  Returns 0, or prints one line
 * and returns -1 (then call outputs_discard). */
int outputs_open(const cli_options *o, resmon_gpu *gpu, outputs *out);
/* The monitor options of every run, streaming each sample to out (the pid
 * and the peak-mark handling are the caller's to set). */
resmon_options outputs_monitor_options(const cli_options *o, outputs *out);
/* A monitor with the given options whose state the Prometheus exporters
 * render while it lives (0 or a negative errno, as resmon_monitor_new), and
 * its end: the exporters keep its final state, then it is freed (accepts
 * NULL). */
int outputs_monitor_new(outputs *out, const resmon_options *opts, resmon_monitor **m);
void outputs_monitor_free(outputs *out, resmon_monitor *m);
/* The monitor's on_sample callback (user: the outputs). */
void outputs_on_sample(const resmon_sample *s, void *user);
/* Before the monitor stops: takes the marks sent so far. */
void outputs_marks_drain(outputs *out);
/* After it stopped: the phases (and marks dropped) into r. */
void outputs_collect_phases(outputs *out, const resmon_monitor *m, run_result *r);
/* The command runs: the samples file takes its name.  0 or -1 (printed). */
int outputs_command_started(outputs *out);
/* Nothing ran: closes everything and leaves every path as it was. */
void outputs_discard(outputs *out);
/* "-o -": stdout is shared with the command, whose output may not end with a
 * newline; where stdout is a regular file, starts the JSON on a line of its own. */
void output_start_on_own_line(FILE *stdout_stream);
/* Writes every output for what was seen, and the table unless quiet.
 * Returns 0, or -1 when an output could not be written (each printed). */
int outputs_finish(const cli_options *o, outputs *out, const run_result *r);

/* ---- exec failures (exec_failure.c) ---- */
/* Prints one line saying why execvp(file) failed with exec_errno ("bad
 * interpreter" when a "#!" line names a missing file) and returns the exit
 * status: EXIT_NOT_FOUND or EXIT_CANNOT_EXECUTE. */
int exec_failure_report(const char *file, int exec_errno);

/* ---- the command's cgroup (cgroup_run.c) ---- */
/* Parses a --memory-limit SIZE: bytes, or a number with K, M, G or T
 * (powers of 1024, optionally followed by "iB" or "B").  0 or -EINVAL. */
int cgroup_parse_size(const char *text, uint64_t *bytes);
/* Makes COMMAND's leaf cgroup before it is forked (none with --no-cgroup or
 * --cgroup).  Returns 0 -- with *cg NULL and the reason in r->cgroup_note
 * when none could be made -- or, having printed one line, EXIT_USAGE when
 * --memory-limit asked for one that cannot be made. */
int cgroup_for_command(const cli_options *o, run_result *r, resmon_cgroup **cg);
/* What the forked, still held COMMAND said of joining the leaf before it may
 * exec (join_rc: 0 or a negative errno; it joins itself, which is cheaper
 * for the kernel than a move by resmon).  On failure the leaf is removed
 * (*cg NULL) and the reason noted; returns EXIT_USAGE (printed) when
 * --memory-limit needs it, else 0. */
int cgroup_enter(const cli_options *o, run_result *r, resmon_cgroup **cg, int join_rc);
/* The leaf's own figures (peak, OOM kills, throttling, I/O: its lifetime,
 * which is the run's) read again after the orphans the command left were
 * waited for or counted, so that r->summary covers them too; the monitor
 * read them at the command's exit. */
void cgroup_read_to_end(const resmon_cgroup *cg, run_result *r);
/* Removes the leaf and frees cg.  What still runs in it moves to the parent,
 * except under --memory-limit: then it stays in the leaf, under the limit,
 * and the leaf stays until a later resmon finds it empty (said on stderr);
 * any other failure to remove it is said too.  Accepts NULL. */
void cgroup_done(const cli_options *o, resmon_cgroup *cg);

/* ---- running the target: child.c, attach.c, signals.c, terminal.c ---- */
/* Runs o->argv, streaming samples to out, fills r, and returns 0 -- also
 * when the command failed, its status is in r -- or, having printed one
 * line, EXIT_USAGE, EXIT_CANNOT_EXECUTE or EXIT_NOT_FOUND when nothing ran.
 * r->have_exit is 0 when the kernel gave no exit status. */
int run_command(const cli_options *o, outputs *out, run_result *r);
/* Between two runs of --repeat: waits, unmeasured, for the processes the last
 * run left running (adopted orphans), reaping each, so that the next run
 * counts none of them; returns early when a signal arrives. */
void run_wait_leftovers(void);
/* Whether pid can be monitored (resmon_process_check): 0, or prints one
 * line with the library's words and returns EXIT_USAGE (no such process, a
 * kernel thread, already exited). */
int attach_check_target(pid_t pid);
/* Monitors o->pid until it exits, --duration passes, or a signal; returns 0
 * or EXIT_USAGE (printed) when the target cannot be monitored. */
int attach_process(const cli_options *o, outputs *out, run_result *r);

/* First of all in main, before any thread starts: records the signal mask
 * resmon was started with (the command's, see signals_restore_for_exec) and
 * blocks SIGPIPE and SIGXFSZ for resmon's every thread, so a write to a pipe
 * without a reader (stderr, stdout, a FIFO) fails with EPIPE, and one past
 * the file-size limit with EFBIG, instead of killing resmon with the exit
 * status and the outputs. */
void signals_block_write_faults(void);
/* Call once before starting anything: SIGCHLD to its default (an ignored
 * SIGCHLD loses the exit status), the forwarded signals (SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT) unblocked and caught unless ignored at start. */
void signals_prepare(void);
/* Where a caught signal goes: the process group and the pid (0: nowhere). */
void signals_forward_to(pid_t pid, pid_t group);
/* The last forwarded signal resmon received, or 0. */
int signals_received(void);
/* Blocks the forwarded signals in the calling thread, storing its previous
 * mask (for ppoll, and around starting threads that must not take them). */
void signals_block_forwarded(sigset_t *previous);
/* Which forwarded signals were ignored when resmon started (a non-interactive
 * shell's background job ignores SIGINT and SIGQUIT): their names, comma
 * separated, into names; returns how many. */
int signals_ignored_at_start(char *names, size_t cap);
/* In the forked child before exec: the signal mask resmon was started with. */
void signals_restore_for_exec(void);

/* The controlling terminal lent to the command's process group while resmon
 * holds the foreground (see terminal.c). */
typedef struct terminal_lease {
    int fd;               /* /dev/tty while lent, else -1 */
    pid_t command_group;
} terminal_lease;
void terminal_lend(terminal_lease *t, pid_t command_group);
int terminal_lent(const terminal_lease *t);
/* The command stopped (Ctrl-Z): take the terminal back, stop resmon, and on
 * continue give it back and continue the command's group. */
void terminal_command_stopped(terminal_lease *t);
void terminal_take_back(terminal_lease *t);

#endif
