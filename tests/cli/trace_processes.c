/*
 * trace_processes.c -- feeds trace_file_processes() (tools/resmon/trace_file.c)
 * the processes given on stdin, for test_trace.py to check the slots.
 *
 *   Usage: trace_processes OUT.json < lines
 * Each line: "pid ppid start end name" (seconds after the first sample; end
 * "-" for a process still running).  One sample at 0 and one at the latest
 * end start and end the timeline; the lines are handed over one call each,
 * in their order, and then again all in one call when the first word of the
 * first line is "batch".  A line "repeat N": the processes are handed over
 * N times more, each time after the last one ended (a trace far larger than
 * the writer keeps for a reader that lags).  OUT "-": standard output, a
 * pipe the test reads only after "fed" on standard error.  How the close
 * went is the status (0: all written) and, when not all, a line on stderr.
 */
#include "options.h"
#include "output_file.h"
#include "run_result.h"
#include "trace_file.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PROCESSES 4096

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    int fd = strcmp(argv[1], "-") == 0 ? STDOUT_FILENO : open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    trace_file *t = fd >= 0 ? trace_file_open(fd, "test", 0) : NULL;
    if (!t)
        return 1;
    static trace_process processes[MAX_PROCESSES];
    static char names[MAX_PROCESSES][64];
    size_t n = 0;
    double last = 0;
    char line[256];
    int batch = 0;
    long repeat = 0;
    while (n < MAX_PROCESSES && fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "batch", 5) == 0) {
            batch = 1;
            continue;
        }
        if (sscanf(line, "repeat %ld", &repeat) == 1)
            continue;
        int pid, ppid;
        double start;
        char end_text[32];
        if (sscanf(line, "%d %d %lf %31s %63s", &pid, &ppid, &start, end_text, names[n]) != 5)
            return 2;
        double end = strcmp(end_text, "-") == 0 ? NAN : strtod(end_text, NULL);
        processes[n] = (trace_process){.pid = pid, .ppid = ppid, .name = names[n], .start_timestamp = 100 + start,
                                       .end_timestamp = isnan(end) ? NAN : 100 + end, .cpu_sec = 0.5,
                                       .peak_rss_mb = 12.25, .exit_code = 0, .source = "test"};
        if (!isnan(end) && end > last)
            last = end;
        n++;
    }
    resmon_sample s;
    memset(&s, 0, sizeof s);
    s.cgroup_mem_mb = NAN;
    s.timestamp = 100;
    trace_file_sample(t, &s, NULL);
    s.timestamp = 100 + last;
    trace_file_sample(t, &s, NULL);
    if (batch) {
        trace_file_processes(t, processes, n);
    } else {
        for (size_t i = 0; i < n; i++)
            trace_file_processes(t, &processes[i], 1);
    }
    for (long k = 0; k < repeat; k++) {
        for (size_t i = 0; i < n; i++) {
            processes[i].start_timestamp += last + 1;
            processes[i].end_timestamp += last + 1;
        }
        trace_file_processes(t, processes, n);
    }
    fputs("fed\n", stderr);
    fflush(stderr);
    cli_options o;
    run_result r;
    memset(&o, 0, sizeof o);
    memset(&r, 0, sizeof r);
    stream_outcome outcome;
    reader_wait wait;
    reader_wait_init(&wait, -1, 0);
    trace_file_finish(t, &o, &r, &wait, &outcome);
    close(fd);
    if (outcome.reader_stuck)
        fprintf(stderr, "%s; %lu not written\n", outcome.stuck_why, outcome.lines_lost);
    return outcome.error == 0 && !outcome.reader_stuck ? 0 : 1;
}
