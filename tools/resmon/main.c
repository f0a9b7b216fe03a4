/*
 * main.c -- the resmon command: run a command (or attach to a process), monitor
 * its process tree with libresmon, and report.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t received_signal;
static volatile pid_t forward_to;

/* Forwards SIGINT/SIGTERM/SIGHUP sent to resmon by a process (kill) to the
 * command.  A signal from the terminal (si_code SI_KERNEL) already reached
 * the command, which shares resmon's foreground process group, so it is not
 * sent twice. */
static void on_signal(int sig, siginfo_t *info, void *context)
{
    (void)context;
    received_signal = sig;
    if (forward_to > 0 && info && info->si_code != SI_KERNEL)
        kill(forward_to, sig);
}

static void install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: waits return EINTR and look again */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

static double clock_sec(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double realtime_sec(void)
{
    return clock_sec(CLOCK_REALTIME);
}

/* The clock of the library's sample timestamps. */
static double monotonic_sec(void)
{
    return clock_sec(CLOCK_MONOTONIC);
}

/* ---- running ------------------------------------------------------------- */

static int new_monitor(resmon_monitor **m, const cli_options *o, pid_t pid, outputs *out)
{
    resmon_options opts = RESMON_OPTIONS_INIT;
    opts.sample_interval_sec = o->interval_sec;
    opts.gpu_profiler = resmon_gpu_profiler_of(out->gpu);
    opts.pid = pid;
    opts.include_children = o->include_children;
    opts.max_samples = 1; /* every sample is streamed; the summary covers them all */
    opts.on_sample = outputs_on_sample;
    opts.on_sample_user = out;
    return resmon_monitor_new(m, &opts);
}

static int attach(const cli_options *o, outputs *out, run_result *r)
{
    resmon_monitor *m = NULL;
    int rc = new_monitor(&m, o, o->pid, out);
    if (rc == 0)
        rc = resmon_monitor_start(m);
    if (rc < 0) {
        fprintf(stderr, "resmon: cannot monitor process %d: %s\n", (int)o->pid,
                rc == -ESRCH ? "no such process" : resmon_strerror(rc));
        resmon_monitor_free(m);
        return EXIT_USAGE;
    }
    r->start_wall_epoch = realtime_sec();
    double start = monotonic_sec();
    outputs_command_started(out);
    install_signal_handlers();
    while (resmon_monitor_running(m) && !received_signal) {
        double left = o->duration_sec > 0 ? o->duration_sec - (monotonic_sec() - start) : 0.05;
        if (left <= 0)
            break;
        double nap = left < 0.02 ? left : 0.02;
        struct timespec ts = {0, (long)(nap * 1e9)};
        nanosleep(&ts, NULL);
    }
    resmon_monitor_stop(m);
    r->wall_sec = monotonic_sec() - start;
    r->interrupted = received_signal != 0;
    resmon_monitor_get_summary(m, &r->summary, sizeof r->summary);
    resmon_monitor_free(m);
    return 0;
}

/* Child side of spawn: waits for the go byte (so the monitor's first sample
 * precedes any work), then execs; on failure sends errno back. */
static void exec_child(const cli_options *o, int go_read, int error_write)
{
    char go;
    ssize_t n;
    do {
        n = read(go_read, &go, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1)
        _exit(EXIT_USAGE); /* resmon died before saying go */
    execvp(o->argv[0], o->argv);
    int err = errno;
    if (write(error_write, &err, sizeof err) < 0)
        _exit(EXIT_CANNOT_EXECUTE);
    _exit(err == ENOENT || err == ENOTDIR ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE);
}

static int run_command(const cli_options *o, outputs *out, run_result *r)
{
    int go[2], error_pipe[2];
    if (pipe2(go, O_CLOEXEC) != 0 || pipe2(error_pipe, O_CLOEXEC) != 0) {
        fprintf(stderr, "resmon: cannot create a pipe: %s\n", strerror(errno));
        return EXIT_USAGE;
    }
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "resmon: cannot fork: %s\n", strerror(errno));
        return EXIT_USAGE;
    }
    if (child == 0) {
        close(go[1]);
        close(error_pipe[0]);
        exec_child(o, go[0], error_pipe[1]);
    }
    close(go[0]);
    close(error_pipe[1]);
    forward_to = child;
    install_signal_handlers();

    resmon_monitor *m = NULL;
    int rc = new_monitor(&m, o, child, out);
    if (rc == 0)
        rc = resmon_monitor_start(m);
    if (rc < 0) {
        fprintf(stderr, "resmon: cannot monitor the command: %s\n", resmon_strerror(rc));
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        resmon_monitor_free(m);
        return EXIT_USAGE;
    }
    r->start_wall_epoch = realtime_sec();
    double start = monotonic_sec();
    if (write(go[1], "g", 1) != 1) {
        /* cannot happen while the child lives; it exits 125 on EOF */
    }
    close(go[1]);

    int exec_errno = 0;
    ssize_t n;
    do {
        n = read(error_pipe[0], &exec_errno, sizeof exec_errno);
    } while (n < 0 && errno == EINTR);
    close(error_pipe[0]);
    if (n == (ssize_t)sizeof exec_errno) {
        resmon_monitor_stop(m);
        resmon_monitor_free(m);
        waitpid(child, NULL, 0);
        return exec_failure_report(o->argv[0], exec_errno);
    }
    outputs_command_started(out);

    /* Wait for the exit without reaping, so the monitor's last sample still
     * sees the command (a zombie) and any descendants it left. */
    siginfo_t info;
    while (waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR)
        ;
    r->wall_sec = monotonic_sec() - start;
    resmon_monitor_stop(m);
    resmon_monitor_get_summary(m, &r->summary, sizeof r->summary);
    resmon_monitor_free(m);

    int status = 0;
    struct rusage usage;
    while (wait4(child, &status, 0, &usage) < 0 && errno == EINTR)
        ;
    forward_to = 0;
    r->have_exit = 1;
    if (WIFSIGNALED(status)) {
        r->term_signal = WTERMSIG(status);
        r->exit_status = 128 + r->term_signal;
    } else {
        r->exit_status = WEXITSTATUS(status);
    }
    r->have_rusage = 1;
    r->rusage_cpu_sec = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec * 1e-6 +
                        (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec * 1e-6;
    r->rusage_maxrss_mb = (double)usage.ru_maxrss / 1024.0; /* KiB on Linux */
    /* The kernel's peak of the largest process is the exact peak for this
     * window: the command's life is the window. */
    r->summary.hwm_rss_mb = r->rusage_maxrss_mb;
    r->summary.hwm_scope = RESMON_HWM_WINDOW;
    r->interrupted = received_signal != 0;
    return 0;
}

int main(int argc, char **argv)
{
    standard_fds_occupy();
    cli_options o;
    int rc = cli_parse(argc, argv, &o);
    if (rc == -1)
        return fclose(stdout) == 0 ? 0 : EXIT_USAGE;
    if (rc != 0)
        return rc;
    if (o.pid && kill(o.pid, 0) != 0 && errno == ESRCH) {
        fprintf(stderr, "resmon: cannot monitor process %d: no such process\n", (int)o.pid);
        return EXIT_USAGE;
    }
    /* A GPU named on the command line must open; "auto" finds one or none. */
    resmon_gpu *gpu = NULL;
    if (strcmp(o.gpu, "none") != 0) {
        char err[512];
        rc = resmon_gpu_open(&gpu, o.gpu, err, sizeof err);
        if (rc < 0 && strcmp(o.gpu, "auto") != 0) {
            fprintf(stderr, "resmon: --gpu %s: %s\n", o.gpu, err);
            return EXIT_USAGE;
        }
        if (rc < 0 && rc != -ENODEV) /* a GPU is there, but which one a CUDA job uses is unclear */
            fprintf(stderr, "resmon: no GPU measured: %s\n", err);
        else if (rc == 0 && *resmon_gpu_selection(gpu) && !o.quiet) /* what "auto"/"all" picked, and why */
            fprintf(stderr, "resmon: GPU %s\n", resmon_gpu_selection(gpu));
    }
    outputs out;
    if (outputs_open(&o, gpu, &out) < 0) {
        outputs_discard(&out);
        resmon_gpu_close(gpu);
        return EXIT_USAGE;
    }
    run_result r;
    memset(&r, 0, sizeof r);
    r.gpu = gpu;
    rc = o.pid ? attach(&o, &out, &r) : run_command(&o, &out, &r);
    if (rc != 0) {
        outputs_discard(&out);
        resmon_gpu_close(gpu);
        return rc;
    }
    rc = outputs_finish(&o, &out, &r);
    resmon_gpu_close(gpu);
    if (rc < 0)
        return o.pid ? EXIT_USAGE : (r.exit_status ? r.exit_status : EXIT_USAGE);
    return o.pid ? 0 : r.exit_status;
}
