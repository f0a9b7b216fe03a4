/*
 * cli.h -- what every part of the resmon command shares: its exit statuses.
 * Each part declares itself in its own header (options.h, outputs.h,
 * child.h, chart.h, ...); a file includes the headers of what it uses.
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

/* Exit statuses of resmon's own failures, as timeout(1) and env(1) use them. */
enum cli_exit {
    EXIT_USAGE = 125,          /* bad usage, unwritable output, bad --pid */
    EXIT_CANNOT_EXECUTE = 126, /* found but not executable */
    EXIT_NOT_FOUND = 127       /* command not found */
};

#endif
