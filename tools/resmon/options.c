/*
 * options.c -- the resmon command line.
 */
#include "options.h"
#include "cli.h"
#include "exporter_options.h"
#include "option_once.h"
#include "option_values.h"
#include "output_paths.h"
#include "text_output.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: resmon [OPTIONS] -- COMMAND [ARG...]   run COMMAND and monitor it and its descendants\n"
    "       resmon [OPTIONS] --pid PID             monitor a running process tree until it exits,\n"
    "                                              --duration ends, or Ctrl-C\n"
    "       resmon [OPTIONS] --cgroup PATH         monitor every process in a cgroup until\n"
    "                                              --duration ends, or Ctrl-C\n"
    "       resmon plot [OPTIONS] RUN... -o FILE   a chart of saved samples files (resmon plot -h)\n"
    "       resmon compare [OPTIONS] BASE NEW      two summaries side by side, with limits (resmon compare -h)\n"
    "       resmon mark NAME                       from within COMMAND: start the phase NAME (resmon mark -h)\n"
    "\n"
    "  -i, --interval SECONDS   sample interval, 0.000001 to 1000000 (default 0.1)\n"
    "  -o, --output FILE        summary as JSON (\"-\" for stdout: one line, after COMMAND's output)\n"
    "  -s, --samples FILE       every sample, CSV or JSON Lines by extension (.csv, .jsonl); \"-\"\n"
    "                           (stdout, shared with COMMAND) or a pipe gets CSV\n"
    "      --plot FILE          a chart of the run: SVG, or PNG for a .png name (needs rsvg-convert)\n"
    "      --trace FILE.json    a timeline of the run in the Chrome trace-event format (open it in\n"
    "                           ui.perfetto.dev or chrome://tracing): phases, CPU, memory and GPU\n"
    "                           counters, and the command as a slice; written as the run goes\n"
    "                           (\"-\": stdout)\n"
    "      --processes-file FILE  one record per process of COMMAND's tree as it ends, CSV or\n"
    "                           JSON Lines by extension (own CPU and peak with CAP_NET_ADMIN);\n"
    "                           \"-\" (stdout) or a pipe gets CSV\n"
    "      --processes WHICH    the JSON summary's processes: top (default: the top 5 by peak and\n"
    "                           by CPU, and every command name) or all (every record too)\n"
    "      --gpu WHICH          auto (default: the GPUs CUDA_VISIBLE_DEVICES shows, else the first\n"
    "                           found), none, all (every GPU the job sees), or a backend:device\n"
    "                           such as nvml:0, nvml:GPU-<uuid>, amd:0, intel:0\n"
    "      --no-children        the process alone, not its tree\n"
    "      --duration SECONDS   stop after this long (with --pid, or --cgroup without COMMAND)\n"
    "      --wait-orphans       when COMMAND exits, also wait for the processes it started that\n"
    "                           still run (resmon adopts them as child subreaper); by default\n"
    "                           resmon stops at COMMAND's exit, says how many still run, and\n"
    "                           leaves them running\n"
    "      --reset-peak         with --pid: reset the target's kernel peak-RSS mark, for a peak\n"
    "                           of the monitored window only; by default the target is left\n"
    "                           untouched and the exact peak is its lifetime peak\n"
    "      --metrics GROUPS     the metric groups to read, comma separated:";
/* (--metrics' groups: print_metric_groups, from the library's list.) */
static const char usage_text_limits[] =
    "      --memory-limit SIZE  run COMMAND under this memory limit (bytes, or K, M, G, T: powers\n"
    "                           of 1024): the kernel's OOM killer ends a process of the tree that\n"
    "                           would go over, and the table and JSON report it; 125 when no\n"
    "                           cgroup can be made\n"
    "      --no-cgroup          do not run COMMAND in a cgroup of its own (by default resmon\n"
    "                           makes one when it may: as root, or in a delegated v2 subtree,\n"
    "                           for the whole tree's exact peak memory, page cache included)\n"
    "      --cgroup PATH        read the figures of an existing cgroup directory (a service, a\n"
    "                           container) instead of making one; without COMMAND or --pid,\n"
    "                           monitor every process in it and below (cgroup.procs) until\n"
    "                           --duration ends or Ctrl-C\n";
/* The rest (one string literal would pass the 4095 characters C11 promises). */
static const char usage_text_rest[] =
    "      --repeat N           run COMMAND N times (1 to 100000), each a full run; -o writes every\n"
    "                           run's summary and, per figure, n, median, mean, stddev, min and max;\n"
    "                           the table shows median +- stddev and min..max and warns of outliers\n"
    "                           and a cold first run.  A failed run stops the repeat with its status\n"
    "                           (the runs so far are written), as Ctrl-C does.  Outputs of one run\n"
    "                           (samples, plot, trace, serve, push, textfile) are refused with\n"
    "                           --repeat\n"
    "      --warmup K           with --repeat: first run COMMAND K times unmeasured (default 0)\n"
    "      --ignore-failure     with --repeat: a run that fails does not stop the repeat\n"
    "  -q, --quiet              no human summary on stderr\n"
    "      --list-gpus          list the GPUs resmon finds, then exit\n"
    "      --version            print the version and exit\n"
    "  -h, --help               this help (the manual: man resmon)\n"
    "\n"
    "The human summary goes to stderr; stdout and stdin belong to COMMAND.  resmon exits\n"
    "with COMMAND's status (128+N if signal N killed it), or 125 for its own errors,\n"
    "126 if COMMAND cannot be executed, 127 if it (or its #! interpreter) is not found.\n"
    "COMMAND runs in a process group of its own (given the terminal when resmon has it):\n"
    "SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to resmon reach the whole group, and COMMAND\n"
    "itself if it left the group.\n"
    "An output that cannot be written is reported on stderr and makes the status 125\n"
    "when COMMAND itself succeeded, as timeout(1) does.\n"
    "\n"
    "Files: -o and --plot are written to a temporary file beside FILE and renamed over\n"
    "it at the end, so a failed run leaves an existing FILE as it was; -s FILE takes\n"
    "its name once COMMAND runs, as does --trace FILE.  A device or FIFO is written in\n"
    "place; on a FIFO with no reader resmon says so and waits for one.  At the end a\n"
    "FIFO's reader that takes nothing for 5 s (or 1 s after a signal), for all outputs\n"
    "together, is given up on, in one line naming what was not written.  Two outputs\n"
    "naming one file are refused, and so is an option that takes one value given twice\n"
    "with different values (--label repeats).\n";

/* --list-gpus: one line per GPU, as "--gpu" names it. */
static void list_gpus(FILE *out)
{
    resmon_gpu_info infos[64];
    size_t count = 0;
    resmon_gpu_list(infos, 64, sizeof *infos, &count);
    if (count == 0)
        fputs("no GPU found (NVIDIA via NVML, AMD via amdgpu sysfs, Intel via i915/xe sysfs)\n", out);
    for (size_t i = 0; i < count && i < 64; i++) {
        fprintf(out, "%s:%u\t", infos[i].backend, infos[i].index);
        print_printable(out, infos[i].name); /* from sysfs or the driver: any bytes */
        if (infos[i].id[0]) {
            fputc('\t', out);
            print_printable(out, infos[i].id);
        }
        if (infos[i].memory_total_mb == infos[i].memory_total_mb) /* not NAN */
            fprintf(out, "\t%.0f MiB", infos[i].memory_total_mb);
        fputc('\n', out);
    }
}

/* Whether an output's name gives its format: its extension picks one of
 * the two (other NULL when there is one); "-" (stdout) and a name that is
 * no regular file (a FIFO, /dev/stdout, a shell's >(...)) say nothing and
 * take the first, which samples_file.c, processes_file.c and trace_file.c
 * write for any name without the second's extension.  Any other name
 * without one is refused: "run.txt" is more likely a slip than a wish. */
static int output_name_gives_format(const char *path, const char *first, const char *other)
{
    struct stat st;
    return path_has_extension(path, first) || (other && path_has_extension(path, other)) ||
           strcmp(path, "-") == 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

/* Prints "resmon: " fmt " (see resmon --help)", with arg (from the command
 * line, so anything) in place of fmt's one %s, shown printable. */
static int usage_error(const char *fmt, const char *arg)
{
    print_usage_line(stderr, "resmon", fmt, arg, "resmon --help");
    return EXIT_USAGE;
}

/* getopt_long found an option it does not take: say which, in the user's
 * spelling ("--quiet=yes" is an option that takes no value, not an unknown
 * one). */
static int unknown_option_error(const char *word, int short_option, const struct option *longopts)
{
    if (short_option == 0 && strncmp(word, "--", 2) != 0)
        return usage_error("unknown option '%s'", word);
    if (short_option == 0) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(word, "="), word);
        size_t length = strlen(name + 2);
        for (const struct option *opt = longopts; opt->name && word[2 + length] == '='; opt++)
            if (length && strncmp(opt->name, name + 2, length) == 0 && opt->has_arg == no_argument)
                return usage_error("option '%s' takes no value", name);
        return usage_error("unknown option '%s'", name);
    }
    char flag[3] = {'-', (char)short_option, '\0'};
    return usage_error("unknown option '%s'", flag);
}

/* Decimal digits only: no sign, no space on either side (strtol alone
 * accepts leading spaces and '+'). */
static int parse_pid(const char *text, pid_t *out)
{
    long pid = 0;
    if (!*text)
        return -EINVAL;
    for (const char *c = text; *c; c++) {
        if (*c < '0' || *c > '9')
            return -EINVAL;
        pid = pid * 10 + (*c - '0');
        if (pid > 0x7fffffff)
            return -EINVAL;
    }
    if (pid == 0)
        return -EINVAL;
    *out = (pid_t)pid;
    return 0;
}

/* --repeat, --warmup: decimal digits only, at most REPEAT_MAX_RUNS, at
 * least minimum. */
static int parse_count(const char *text, long minimum, long *out)
{
    long count = 0;
    if (!*text)
        return -EINVAL;
    for (const char *c = text; *c; c++) {
        if (*c < '0' || *c > '9')
            return -EINVAL;
        count = count * 10 + (*c - '0');
        if (count > REPEAT_MAX_RUNS)
            return -ERANGE;
    }
    if (count < minimum)
        return -EINVAL;
    *out = count;
    return 0;
}

/* Writes a word of --help's text after *column, wrapping under the
 * descriptions (column 27) before column 94. */
static void put_help_word(FILE *out, size_t *column, const char *word, size_t length)
{
    enum { INDENT = 27, WIDTH = 94 };
    if (*column + 1 + length > WIDTH) {
        fprintf(out, "\n%*s", INDENT, "");
        *column = INDENT;
    } else {
        fputc(' ', out);
        ++*column;
    }
    fwrite(word, 1, length, out);
    *column += length;
}

static void put_help_words(FILE *out, size_t *column, const char *text)
{
    while (*text) {
        size_t length = strcspn(text, " ");
        put_help_word(out, column, text, length);
        text += length;
        text += *text == ' ';
    }
}

/* --help's list of the metric groups, from the library's (each group's
 * command word and words). */
static void print_metric_groups(FILE *out)
{
    size_t column = strlen("      --metrics GROUPS     the metric groups to read, comma separated:");
    char item[256];
    resmon_metric_group g;
    for (size_t i = 0, count = resmon_metric_group_count(); resmon_metric_group_info(i, &g, sizeof g) == 0; i++) {
        snprintf(item, sizeof item, "%s (%s)%s", g.command_name, g.words, i + 1 == count ? ";" : ",");
        put_help_words(out, &column, item);
    }
    put_help_words(out, &column, "or all (default) or none (CPU and RSS only, the cheapest)");
    fputc('\n', out);
}

/* Whether word (length bytes) is name, '-' standing for '_' when dashes. */
static int word_is(const char *word, size_t length, const char *name, int dashes)
{
    if (strlen(name) != length)
        return 0;
    for (size_t i = 0; i < length; i++)
        if (word[i] != name[i] && !(dashes && word[i] == '-' && name[i] == '_'))
            return 0;
    return 1;
}

/* --metrics: a group's bits by any of its names in the library's list (the
 * command's word, the Python binding's name, that name with '-' for '_'),
 * or all, or none.  -EINVAL for another word. */
static int metric_group_bits(const char *word, size_t length, unsigned *bits)
{
    if (word_is(word, length, "all", 0) || word_is(word, length, "none", 0)) {
        *bits = word[0] == 'a' ? RESMON_METRIC_ALL : 0;
        return 0;
    }
    resmon_metric_group g;
    for (size_t i = 0; resmon_metric_group_info(i, &g, sizeof g) == 0; i++)
        if (word_is(word, length, g.command_name, 0) || word_is(word, length, g.name, 1)) {
            *bits = g.bit;
            return 0;
        }
    return -EINVAL;
}

/* A comma-separated list of group names; returns 0, or -EINVAL with the
 * first unknown (or empty) name copied into bad. */
static int parse_metric_groups(const char *text, unsigned *out, char *bad, size_t badcap)
{
    unsigned groups = 0;
    const char *word = text;
    for (;;) {
        size_t length = strcspn(word, ",");
        unsigned bits;
        if (metric_group_bits(word, length, &bits) < 0) {
            snprintf(bad, badcap, "%.*s", (int)length, word);
            return -EINVAL;
        }
        groups |= bits;
        if (word[length] == '\0')
            break;
        word += length + 1;
    }
    *out = groups;
    return 0;
}

/* The test seams RESMON_PROC_ROOT and RESMON_SYSFS_ROOT name directories
 * that stand for /proc and /sys.  A wrong one would surface as a puzzling
 * error deep in a run; say what is wrong with it before anything starts. */
static int check_root_variable(const char *variable)
{
    const char *root = getenv(variable);
    struct stat st;
    if (!root)
        return 0;
    int err = stat(root, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    if (err) {
        fprintf(stderr, "resmon: %s='", variable);
        print_printable(stderr, root);
        fprintf(stderr, "': %s (it must name a directory that stands for %s)\n",
                strerror(err), strcmp(variable, "RESMON_PROC_ROOT") == 0 ? "/proc" : "/sys");
        return EXIT_USAGE;
    }
    return 0;
}

/* What --repeat takes: a command (each run is one), and no output that is
 * of one run (a samples file, a chart, a live or pushed series). */
static int repeat_options_check(const cli_options *o, int warmup_given)
{
    if (!o->repeat && (warmup_given || o->ignore_failure))
        return usage_error("%s works with --repeat only", warmup_given ? "--warmup" : "--ignore-failure");
    if (!o->repeat)
        return 0;
    if (o->pid || o->watch_cgroup)
        return usage_error("--repeat runs a COMMAND: not with --pid or --cgroup without COMMAND%s", "");
    const char *per_run = o->samples_path ? "-s" : o->processes_path ? "--processes-file" : o->plot_path ? "--plot" : o->trace_path ? "--trace"
                          : o->exporters.serve_address ? "--serve"
                          : o->exporters.push_url ? "--push" : o->exporters.textfile_path ? "--textfile" : NULL;
    if (per_run)
        return usage_error("%s is of one run, not with --repeat (run once without --repeat for it)", per_run);
    return 0;
}

enum { OPT_PLOT = 256, OPT_GPU, OPT_NO_CHILDREN, OPT_DURATION, OPT_PID, OPT_VERSION, OPT_HELP, OPT_LIST_GPUS,
       OPT_WAIT_ORPHANS, OPT_RESET_PEAK, OPT_METRICS, OPT_MEMORY_LIMIT, OPT_NO_CGROUP, OPT_CGROUP,
       OPT_REPEAT, OPT_WARMUP, OPT_IGNORE_FAILURE, OPT_TRACE, OPT_PROCESSES_FILE,
       OPT_PROCESSES };

/* The options whose values are numbers, read as their cases below read
 * them (option_once's rule compares these by number: "-i 0.1 -i 0.10"). */
static int option_number(int code, const char *text, double *value)
{
    long count;
    pid_t pid;
    uint64_t bytes;
    switch (code) {
    case 'i':
    case OPT_DURATION:
    case EXPORTER_OPT_SERVE_LINGER:
    case EXPORTER_OPT_PUSH_INTERVAL:
    case EXPORTER_OPT_PUSH_TIMEOUT:
        return parse_seconds(text, value, 1) < 0 ? -1 : 0;
    case OPT_REPEAT:
    case OPT_WARMUP:
        if (parse_count(text, 0, &count) < 0)
            return -1;
        *value = (double)count;
        return 0;
    case OPT_PID:
        if (parse_pid(text, &pid) < 0)
            return -1;
        *value = (double)pid;
        return 0;
    case OPT_MEMORY_LIMIT:
        if (parse_size(text, &bytes) < 0)
            return -1;
        *value = (double)bytes;
        return 0;
    default:
        return -1;
    }
}

int cli_parse(int argc, char **argv, cli_options *o)
{
    int warmup_given = 0;
    static const struct option longopts[] = {
        {"interval", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'},
        {"samples", required_argument, NULL, 's'},
        {"plot", required_argument, NULL, OPT_PLOT},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"gpu", required_argument, NULL, OPT_GPU},
        {"no-children", no_argument, NULL, OPT_NO_CHILDREN},
        {"duration", required_argument, NULL, OPT_DURATION},
        {"pid", required_argument, NULL, OPT_PID},
        {"quiet", no_argument, NULL, 'q'},
        {"version", no_argument, NULL, OPT_VERSION},
        {"help", no_argument, NULL, OPT_HELP},
        {"list-gpus", no_argument, NULL, OPT_LIST_GPUS},
        {"wait-orphans", no_argument, NULL, OPT_WAIT_ORPHANS},
        {"reset-peak", no_argument, NULL, OPT_RESET_PEAK},
        {"metrics", required_argument, NULL, OPT_METRICS},
        {"memory-limit", required_argument, NULL, OPT_MEMORY_LIMIT},
        {"no-cgroup", no_argument, NULL, OPT_NO_CGROUP},
        {"cgroup", required_argument, NULL, OPT_CGROUP},
        {"repeat", required_argument, NULL, OPT_REPEAT},
        {"warmup", required_argument, NULL, OPT_WARMUP},
        {"ignore-failure", no_argument, NULL, OPT_IGNORE_FAILURE},
        {"processes-file", required_argument, NULL, OPT_PROCESSES_FILE},
        {"processes", required_argument, NULL, OPT_PROCESSES},
        EXPORTER_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->interval_sec = 0.1;
    o->gpu = "auto";
    o->include_children = 1;
    o->metrics = RESMON_METRIC_ALL;
    exporter_options_init(&o->exporters);
    char err[512], twice[160];
    opterr = 0; /* our own messages: one line each */
    int c, word_index = optind;
    /* "+": stop at the first non-option, which starts COMMAND. */
    option_once given = {.number = option_number};
    for (; (c = getopt_long(argc, argv, "+:i:o:s:qh", longopts, NULL)) != -1; word_index = optind) {
        /* A second value silently replaced the first: refused, as in every
         * subcommand (only --label repeats) -- after the switch, so that an
         * invalid second value is named as invalid, as a single one is. */
        int twice_given = optarg && c != ':' && c != '?' && c != EXPORTER_OPT_LABEL &&
                          option_once_check(&given, c, optarg, longopts, twice, sizeof twice) != 0;
        switch (c) {
        case 'i':
            /* The library's range: below 1 us or above 11 days is surely a unit mistake. */
            if (parse_seconds(optarg, &o->interval_sec, 0) < 0 || o->interval_sec < 1e-6 || o->interval_sec > 1e6)
                return usage_error("invalid interval '%s': give a number of seconds from 0.000001 to 1000000",
                                   optarg);
            break;
        case 'o':
            o->summary_path = optarg;
            break;
        case 's':
            if (!output_name_gives_format(optarg, ".csv", ".jsonl"))
                return usage_error("samples file '%s' must end in .csv or .jsonl, or be - (stdout)", optarg);
            o->samples_path = optarg;
            break;
        case OPT_PLOT:
            o->plot_path = optarg;
            break;
        case OPT_TRACE:
            if (!output_name_gives_format(optarg, ".json", NULL))
                return usage_error("trace file '%s' must end in .json, or be - (stdout)", optarg);
            o->trace_path = optarg;
            break;
        case OPT_PROCESSES_FILE:
            if (!output_name_gives_format(optarg, ".csv", ".jsonl"))
                return usage_error("processes file '%s' must end in .csv or .jsonl, or be - (stdout)", optarg);
            o->processes_path = optarg;
            break;
        case OPT_PROCESSES:
            if (strcmp(optarg, "top") != 0 && strcmp(optarg, "all") != 0)
                return usage_error("unknown --processes '%s': use top or all", optarg);
            o->processes_all = strcmp(optarg, "all") == 0;
            break;
        case OPT_GPU:
            if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "none") != 0 && strcmp(optarg, "all") != 0 &&
                !strchr(optarg, ':'))
                return usage_error("unknown GPU selection '%s': use auto, none, all, or nvml:N, amd:N, intel:N", optarg);
            o->gpu = optarg;
            break;
        case OPT_NO_CHILDREN:
            o->include_children = 0;
            break;
        case OPT_DURATION:
            if (parse_seconds(optarg, &o->duration_sec, 0) < 0)
                return usage_error("invalid duration '%s': give a positive number of seconds", optarg);
            break;
        case OPT_PID: {
            pid_t pid;
            if (parse_pid(optarg, &pid) < 0)
                return usage_error("invalid PID '%s': give a process id in decimal digits only", optarg);
            o->pid = pid;
            break;
        }
        case OPT_WAIT_ORPHANS:
            o->wait_orphans = 1;
            break;
        case OPT_RESET_PEAK:
            o->reset_peak = 1;
            break;
        case OPT_METRICS:
            if (parse_metric_groups(optarg, &o->metrics, err, sizeof err) < 0) {
                if (!*err)
                    return usage_error("empty metric group in '--metrics %s'", optarg);
                char fmt[384] = "unknown metric group '%s': use "; /* the words from the group list */
                resmon_metric_group g;
                for (size_t i = 0; resmon_metric_group_info(i, &g, sizeof g) == 0; i++)
                    snprintf(fmt + strlen(fmt), sizeof fmt - strlen(fmt), "%s, ", g.command_name);
                snprintf(fmt + strlen(fmt), sizeof fmt - strlen(fmt), "all or none, comma separated");
                return usage_error(fmt, err);
            }
            break;
        case OPT_MEMORY_LIMIT: {
            int rc = parse_size(optarg, &o->memory_limit_bytes);
            if (rc == -ERANGE)
                return usage_error("memory limit '%s' out of range: give at least 4096 bytes (4K) and less than "
                                   "4 EiB (4194304T)", optarg);
            if (rc < 0)
                return usage_error("invalid memory limit '%s': give bytes (at least 4096) or a number with K, M, G "
                                   "or T, such as 4G", optarg);
            break;
        }
        case OPT_NO_CGROUP:
            o->no_cgroup = 1;
            break;
        case OPT_CGROUP:
            o->cgroup_path = optarg;
            break;
        case OPT_REPEAT:
            if (parse_count(optarg, 1, &o->repeat) < 0)
                return usage_error("invalid --repeat '%s': give a number of runs from 1 to 100000", optarg);
            break;
        case OPT_WARMUP:
            if (parse_count(optarg, 0, &o->warmup) < 0)
                return usage_error("invalid --warmup '%s': give a number of runs from 0 to 100000", optarg);
            warmup_given = 1;
            break;
        case OPT_IGNORE_FAILURE:
            o->ignore_failure = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case OPT_VERSION:
            printf("resmon %s\n", resmon_version_string());
            return -1;
        case 'h':
        case OPT_HELP:
            fputs(usage_text, stdout);
            print_metric_groups(stdout);
            fputs(usage_text_limits, stdout);
            fputs(usage_text_rest, stdout);
            fputs(exporter_usage_text, stdout);
            return -1;
        case OPT_LIST_GPUS:
            list_gpus(stdout);
            return -1;
        case ':':
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: {
            if (c >= EXPORTER_OPT_FIRST && c <= EXPORTER_OPT_LAST) {
                if (exporter_parse_option(&o->exporters, c, optarg, err, sizeof err) < 0)
                    return usage_error("%s", err);
                break;
            }
            /* The word in error ends before optind when getopt moved past it;
             * a short option inside a group ("-xq") leaves optind where it was. */
            const char *word = optind > word_index ? argv[optind - 1] : "";
            return unknown_option_error(word, strncmp(word, "--", 2) == 0 ? 0 : optopt, longopts);
        }
        }
        if (twice_given)
            return usage_error(twice, optarg);
    }
    o->argv = argv + optind;
    o->argc = argc - optind;
    if (o->pid && o->argc > 0)
        return usage_error("give either --pid or a command, not both%s", "");
    o->watch_cgroup = o->cgroup_path && !o->pid && o->argc == 0;
    if (!o->pid && o->argc == 0 && !o->watch_cgroup)
        return usage_error("missing command: resmon [OPTIONS] -- COMMAND [ARG...]%s", "");
    if (o->duration_sec > 0 && !o->pid && !o->watch_cgroup)
        return usage_error("--duration works with --pid only (or --cgroup without COMMAND)%s", "");
    if (check_root_variable("RESMON_PROC_ROOT") || check_root_variable("RESMON_SYSFS_ROOT"))
        return EXIT_USAGE;
    if (o->reset_peak && !o->pid)
        return usage_error("--reset-peak works with --pid only%s", "");
    if (o->processes_path && (o->pid || o->watch_cgroup || !o->include_children))
        return usage_error("--processes-file records COMMAND's tree: not with --pid, --cgroup without COMMAND or "
                           "--no-children%s", "");
    if (o->processes_all && (o->pid || o->watch_cgroup || !o->include_children))
        return usage_error("--processes all records COMMAND's tree: not with --pid, --cgroup without COMMAND or "
                           "--no-children%s", "");
    if (o->processes_all && !o->summary_path)
        return usage_error("--processes all lists every process in the JSON summary: give -o FILE (or -o -)%s", "");
    if (o->wait_orphans && (o->pid || o->watch_cgroup))
        return usage_error("--wait-orphans works with a command only%s", "");
    if (o->memory_limit_bytes && (o->pid || o->no_cgroup || o->cgroup_path))
        return usage_error("--memory-limit needs a cgroup made for the command: not with --pid, --no-cgroup or "
                           "--cgroup%s", "");
    if (o->no_cgroup && o->cgroup_path)
        return usage_error("give either --no-cgroup or --cgroup, not both%s", "");
    if (exporter_options_check(&o->exporters, err, sizeof err) < 0)
        return usage_error("%s", err);
    int rc = repeat_options_check(o, warmup_given);
    if (rc != 0)
        return rc;
    /* The file system last: a wrong combination of options is named first. */
    if (o->cgroup_path) {
        /* One rule with a command, --pid or alone: a path that is no cgroup
         * (missing, a file, or a directory without cgroup.procs, such as
         * /tmp) is refused before anything runs. */
        struct stat st;
        int dir = open(o->cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int is_cgroup = dir >= 0 && fstatat(dir, "cgroup.procs", &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (dir >= 0)
            close(dir);
        if (!is_cgroup)
            return usage_error("--cgroup '%s': not a cgroup directory (it has no cgroup.procs)", o->cgroup_path);
    }
    return 0;
}
