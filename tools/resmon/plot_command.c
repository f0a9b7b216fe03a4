/*
 * plot_command.c -- `resmon plot [OPTIONS] RUN... -o FILE`: the chart of
 * saved samples files (-s), several runs overlaid with a colour each, drawn
 * by the renderer the live run's --plot uses.
 */
#include "plot_command.h"
#include "chart.h"
#include "chart_png.h"
#include "chart_series.h"
#include "cli.h"
#include "option_once.h"
#include "output_file.h"
#include "output_paths.h"
#include "samples_read.h"
#include "signals.h"
#include "text_output.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_MAX_RUNS 16

static const char plot_usage_text[] =
    "usage: resmon plot [OPTIONS] RUN... -o FILE   a chart of saved runs: samples files written\n"
    "                                               by resmon -s (CSV or JSON Lines), overlaid\n"
    "\n"
    "  -o, --output FILE        the chart: SVG, or PNG for a .png name (through rsvg-convert)\n"
    "  -l, --label NAME         the legend's name of the next RUN, in order (default: its file name)\n"
    "      --title TEXT         the chart's title (default: resmon plot and the labels)\n"
    "      --cpus N             draw the CPU capacity line at N x 100 % (the samples do not record\n"
    "                           how many CPUs the run had)\n"
    "  -h, --help               this help (the manual: man resmon)\n"
    "\n"
    "At most 16 runs, each in its own colour; a file's phase column (marks) is drawn as\n"
    "labelled bands.  A file that cannot be read as samples (or is no regular file: a FIFO,\n"
    "a device) is named in one line, and the status is 125; FILE is then left as it was.\n"
    "FILE may not be one of the RUNs (the same file by any name): refused with 125.\n";

/* what, then 'arg' -- or arg in what's place for "%s" where it has one. */
static int plot_usage_error(const char *what, const char *arg)
{
    print_usage_line(stderr, "resmon plot", what, arg, "resmon plot --help");
    return EXIT_USAGE;
}

typedef struct plot_options {
    const char *output, *title;
    const char *labels[PLOT_MAX_RUNS];
    int label_count, cpus;
    char **runs;
    int run_count;
} plot_options;

enum { OPT_TITLE = 256, OPT_CPUS };

/* --cpus is a number: "--cpus 4 --cpus 04" gives it once (option_once.c). */
static int plot_option_number(int code, const char *text, double *value)
{
    char *end;
    if (code != OPT_CPUS)
        return -1;
    *value = (double)strtol(text, &end, 10);
    return end == text || *end || text[strspn(text, "0123456789")] ? -1 : 0;
}

/* 0, -1 after --help, or EXIT_USAGE (printed). */
static int plot_parse(int argc, char **argv, plot_options *o)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"label", required_argument, NULL, 'l'},
        {"title", required_argument, NULL, OPT_TITLE}, {"cpus", required_argument, NULL, OPT_CPUS},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    opterr = 0;
    optind = 1;
    int c;
    option_once given = {.number = plot_option_number};
    char twice[160];
    while ((c = getopt_long(argc, argv, ":o:l:h", longopts, NULL)) != -1) {
        /* Said after the switch: an invalid second value is named as invalid. */
        int twice_given = optarg && c != ':' && c != '?' && c != 'l' && /* -l: one for each RUN */
                          option_once_check(&given, c, optarg, longopts, twice, sizeof twice) != 0;
        switch (c) {
        case 'o':
            o->output = optarg;
            break;
        case 'l':
            if (o->label_count == PLOT_MAX_RUNS)
                return plot_usage_error("more --label than the 16 runs a chart takes", NULL);
            o->labels[o->label_count++] = optarg;
            break;
        case OPT_TITLE:
            o->title = optarg;
            break;
        case OPT_CPUS: {
            char *end;
            long n = strtol(optarg, &end, 10);
            /* digits only: strtol also took " +4" (review 71) */
            if (end == optarg || *end || n < 1 || n > 65536 || optarg[strspn(optarg, "0123456789")])
                return plot_usage_error("--cpus takes a number of CPUs from 1 to 65536, not", optarg);
            o->cpus = (int)n;
            break;
        }
        case 'h':
            fputs(plot_usage_text, stdout);
            return -1;
        case ':':
            return plot_usage_error("option needs a value:", argv[optind - 1]);
        default:
            if (optopt > 0 && optopt <= UCHAR_MAX) {
                /* A short option: inside a group ("-xh") optind has not moved past its word. */
                char word[] = {'-', (char)optopt, '\0'};
                return plot_usage_error("unknown option", word);
            }
            return plot_usage_error("unknown option", argv[optind - 1]);
        }
        if (twice_given)
            return plot_usage_error(twice, optarg);
    }
    o->runs = argv + optind;
    o->run_count = argc - optind;
    if (o->run_count == 0)
        return plot_usage_error("no RUN given: resmon plot RUN.csv [RUN.jsonl...] -o FILE", NULL);
    if (o->run_count > PLOT_MAX_RUNS)
        return plot_usage_error("more than 16 runs in one chart", NULL);
    if (!o->output)
        return plot_usage_error("no output: give -o FILE (.svg or .png)", NULL);
    if (o->label_count > o->run_count)
        return plot_usage_error("more --label than runs", NULL);
    return 0;
}

/* "resmon plot — a.csv vs b.csv" */
static void default_title(const chart_run *runs, int count, char *title, size_t cap)
{
    int n = snprintf(title, cap, "resmon plot \xe2\x80\x94");
    for (int i = 0; i < count && n > 0 && (size_t)n < cap; i++)
        n += snprintf(title + n, cap - (size_t)n, "%s%s", i ? " vs " : " ", runs[i].label);
}

/* Reads every run; 0, or EXIT_USAGE naming the file that failed. */
static int read_runs(const plot_options *o, chart_series **series, chart_run *runs)
{
    for (int i = 0; i < o->run_count; i++) {
        char why[256];
        double end = 0;
        if (!(series[i] = chart_series_new())) {
            fputs("resmon plot: out of memory\n", stderr);
            return EXIT_USAGE;
        }
        if (samples_read(o->runs[i], series[i], &end, why, sizeof why) < 0) {
            fputs("resmon plot: '", stderr);
            print_printable(stderr, o->runs[i]);
            fputs("': ", stderr);
            print_printable(stderr, why);
            fputc('\n', stderr);
            return EXIT_USAGE;
        }
        chart_series_finish(series[i]);
        const char *slash = strrchr(o->runs[i], '/');
        runs[i] = (chart_run){series[i], i < o->label_count ? o->labels[i] : slash && slash[1] ? slash + 1 : o->runs[i],
                              end};
    }
    return 0;
}

/* The chart through rsvg-convert into file, within wait's bound (a hung
 * converter is killed); 0, or -1 printed with the reason. */
static int plot_png(output_file *file, const char *converter, reader_wait *wait, const chart_info *info,
                    const chart_run *runs, int count)
{
    char why[512];
    errno = 0;
    FILE *svg = chart_png_begin();
    if (!svg) {
        snprintf(why, sizeof why, "cannot render the chart: %s", strerror(errno ? errno : ENOMEM));
    } else if (chart_render_svg(svg, info, runs, (size_t)count) != 0) {
        snprintf(why, sizeof why, "cannot render the chart: %s", strerror(errno ? errno : EIO));
        fclose(svg);
    } else if (chart_png_finish(svg, converter, file->stream, wait, why, sizeof why) == 0) {
        return 0;
    }
    fputs("resmon plot: cannot write '", stderr);
    print_printable(stderr, file->path);
    fputs("': ", stderr);
    print_printable(stderr, why);
    fputc('\n', stderr);
    return -1;
}

int plot_main(int argc, char **argv)
{
    plot_options o;
    int rc = plot_parse(argc, argv, &o);
    if (rc == -1)
        return stdout_close("resmon plot");
    if (rc != 0)
        return rc;
    const char *paths[1 + PLOT_MAX_RUNS], *options[1 + PLOT_MAX_RUNS];
    paths[0] = o.output;
    options[0] = "-o";
    for (int i = 0; i < o.run_count; i++) {
        paths[1 + i] = o.runs[i];
        options[1 + i] = "the run";
    }
    if (output_paths_check("resmon plot", paths, options, 1, 1 + (size_t)o.run_count) != 0)
        return EXIT_USAGE; /* -o run.csv would replace the samples it charts */
    char converter[4096];
    if (chart_output_check("resmon plot", o.output, "-o", converter, sizeof converter) < 0)
        return EXIT_USAGE;
    chart_series *series[PLOT_MAX_RUNS] = {NULL};
    chart_run runs[PLOT_MAX_RUNS];
    output_file file = {.who = "resmon plot"};
    rc = read_runs(&o, series, runs);
    if (rc == 0 && output_file_open(&file, o.output, "plot file") < 0)
        rc = EXIT_USAGE;
    if (rc == 0) {
        /* One bound for the converter and a FIFO's reader together, as a
         * run's --plot has: a hung rsvg-convert is killed after it.  While
         * it runs, SIGTERM, SIGINT and SIGHUP are caught (resmon plot would
         * die and leave it running): they cut the wait to its 1 s grace,
         * the converter is killed, nothing is written, and resmon plot
         * exits 128 + the signal.  An SVG chart catches none. */
        if (converter[0])
            signals_prepare();
        reader_wait wait;
        reader_wait_init(&wait, converter[0] ? signals_stop_fd() : -1, 0);
        output_file_wait_with(&file, &wait);
        char title[512];
        if (!o.title)
            default_title(runs, o.run_count, title, sizeof title);
        chart_info info = {.title = o.title ? o.title : title,
                           .cpus = o.cpus,
                           .cpus_source = "--cpus",
                           .exact_peak_process_mb = NAN,
                           .exact_peak_tree_mb = NAN};
        if (!converter[0]) {
            /* SVG straight into the file: a failed write is the stream's, and
             * publishing reports its errno (ENOSPC for /dev/full). */
            chart_render_svg(file.stream, &info, runs, (size_t)o.run_count);
            if (output_file_publish(&file) < 0)
                rc = EXIT_USAGE;
        } else if (plot_png(&file, converter, &wait, &info, runs, o.run_count) < 0) {
            output_file_discard(&file);
            rc = signals_received() ? 128 + signals_received() : EXIT_USAGE;
        } else if (signals_received()) { /* stopped: nothing is written */
            output_file_discard(&file);
            rc = 128 + signals_received();
        } else if (output_file_publish(&file) < 0) {
            rc = EXIT_USAGE;
        }
    }
    if (rc != 0 && file.stream)
        output_file_discard(&file);
    for (int i = 0; i < o.run_count; i++)
        chart_series_free(series[i]);
    return rc;
}
