/*
 * child.c -- running the command: fork and exec in a process group of its
 * own, with resmon as the child subreaper of everything it starts; waiting
 * for its exit while reaping every orphan its tree leaves; and the kernel's
 * exact accounting (wait4) of all of it.
 *
 * As a subreaper (PR_SET_CHILD_SUBREAPER), resmon adopts any descendant
 * whose parent exits, instead of init.  Those orphans stay resmon's to reap:
 * their CPU time and peak RSS, which the kernel hands over only to whoever
 * reaps them, join the command's wait4 figures, and no zombie piles up --
 * also when resmon is PID 1 of a container.  When the command exits while
 * adopted descendants still run, resmon says how many and, by default,
 * leaves them running; --wait-orphans waits for them (reaping each, so
 * their CPU counts) before the outputs are written.
 */
#include "child.h"
#include "cgroup_run.h"
#include "cli.h"
#include "clocks.h"
#include "exec_failure.h"
#include "options.h"
#include "outputs.h"
#include "run_result.h"
#include "signals.h"
#include "terminal.h"
#include "process_records.h"
#include "taskstats.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static double seconds_of(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* Adds what the kernel accounted for one reaped process (and all it reaped). */
static void add_usage(run_result *r, const struct rusage *usage)
{
    r->rusage_cpu_sec += seconds_of(usage->ru_utime) + seconds_of(usage->ru_stime);
    r->rusage_nvcsw += (double)usage->ru_nvcsw;
    r->rusage_nivcsw += (double)usage->ru_nivcsw;
    double maxrss_mb = (double)usage->ru_maxrss / 1024.0; /* KiB on Linux */
    if (maxrss_mb > r->rusage_maxrss_mb)
        r->rusage_maxrss_mb = maxrss_mb;
}

/* The kernel keeps the context switches of a process that ended only for
 * whoever reaps it (wait4), never in /proc, so the samples miss those of
 * every process that ended between two of them.  The command's wait4 (with
 * the orphans resmon reaped) has them all; descendants still running, which
 * only the samples saw, may add more: the larger figure stands. */
static void keep_kernel_switches(run_result *r)
{
    resmon_summary *s = &r->summary;
    if (!isnan(s->voluntary_switches) && r->rusage_nvcsw > s->voluntary_switches)
        s->voluntary_switches = r->rusage_nvcsw;
    if (!isnan(s->involuntary_switches) && r->rusage_nivcsw > s->involuntary_switches)
        s->involuntary_switches = r->rusage_nivcsw;
}

/* The name of a process that has exited but is not reaped yet, for its
 * record; "" when unknown. */
static void zombie_comm(pid_t pid, char *comm, size_t cap)
{
    comm[0] = '\0';
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = pid > 0 ? fopen(path, "re") : NULL;
    if (!f)
        return;
    if (!fgets(comm, (int)cap, f))
        comm[0] = '\0';
    comm[strcspn(comm, "\n")] = '\0';
    fclose(f);
}

/* The pid of a child that has exited, left unreaped (so its name can still
 * be read); 0 when none has (with WNOHANG); -errno (EINTR: a signal came
 * while it waited, which the caller must see). */
static pid_t exited_child(int options)
{
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_ALL, 0, &info, WEXITED | WNOWAIT | options) != 0)
        return -errno;
    return info.si_pid > 0 ? info.si_pid : 0;
}

/* Reaps an adopted orphan that has exited, adding its accounting, or
 * consumes a stop report of one (only asked for while the terminal is
 * lent).  Returns 1 when a process was reaped. */
static int reap_adopted(pid_t pid, int options, run_result *r)
{
    int status;
    struct rusage usage;
    pid_t got;
    char comm[PROCESS_COMM_MAX];
    if (pid == -1 && r->processes) { /* which one, for its record's name (a stop report leaves -1) */
        pid_t exited;
        while ((exited = exited_child(options & WNOHANG)) == -EINTR)
            ;
        pid = exited > 0 ? exited : -1;
    }
    zombie_comm(pid, comm, sizeof comm);
    while ((got = wait4(pid, &status, options | WUNTRACED, &usage)) < 0 && errno == EINTR)
        ;
    if (got <= 0 || WIFSTOPPED(status))
        return 0;
    add_usage(r, &usage);
    if (r->processes)
        process_records_wait4(r->processes, got, comm, status, &usage, clock_monotonic_sec());
    return 1;
}

/* Reaps every adopted orphan that has already exited; returns how many. */
static int reap_exited_orphans(run_result *r)
{
    int reaped = 0;
    while (reap_adopted(-1, WNOHANG, r))
        reaped++;
    return reaped;
}

/* How many children resmon has (after the command was reaped: the adopted
 * descendants still running), the first cap of them stored in pids.
 * Children belong to the thread that adopted them, so every thread's list
 * is read.  -1 when /proc cannot say. */
static int list_children(pid_t *pids, int cap)
{
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks)
        return -1;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(tasks)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
        FILE *f = fopen(path, "re");
        if (!f) {
            count = -1;
            break;
        }
        int pid;
        while (fscanf(f, "%d", &pid) == 1) {
            if (count < cap)
                pids[count] = pid;
            count++;
        }
        fclose(f);
    }
    closedir(tasks);
    return count;
}

static int count_children(void)
{
    return list_children(NULL, 0);
}

/* Waits until the command has exited, without reaping it (so the monitor's
 * last sample still sees it, a zombie, and what it left), reaping adopted
 * orphans meanwhile.  While the terminal is lent, a stop of the command
 * (Ctrl-Z) stops resmon too.  Returns 0 or a negative errno. */
static int wait_for_exit(pid_t child, terminal_lease *tty, run_result *r)
{
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        int stops = terminal_lent(tty) ? WSTOPPED : 0;
        if (waitid(P_ALL, 0, &info, WEXITED | WNOWAIT | stops) != 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (info.si_pid != child) {
            reap_adopted(info.si_pid, WNOHANG, r);
        } else if (info.si_code == CLD_STOPPED) {
            while (waitid(P_PID, (id_t)child, &info, WSTOPPED | WNOHANG) != 0 && errno == EINTR)
                ; /* the stop is consumed; the exit stays to be reaped */
            terminal_command_stopped(tty);
        } else {
            return 0;
        }
    }
}

/* --wait-orphans: reaps adopted descendants until none is left or resmon is
 * told to stop (the signal has been forwarded to the command's group). */
static void wait_for_orphans(run_result *r)
{
    for (;;) {
        int status;
        struct rusage usage;
        if (signals_received())
            return;
        char comm[PROCESS_COMM_MAX] = "";
        pid_t exited = -1;
        if (r->processes) { /* waits, leaving it to be read */
            exited = exited_child(0);
            if (exited == -EINTR)
                continue; /* signals_received() says whether to stop */
            if (exited <= 0)
                return; /* ECHILD: none left */
            zombie_comm(exited, comm, sizeof comm);
        }
        pid_t got = wait4(exited, &status, 0, &usage);
        if (got > 0) {
            add_usage(r, &usage);
            if (r->processes)
                process_records_wait4(r->processes, got, comm, status, &usage, clock_monotonic_sec());
        } else if (errno != EINTR) {
            return; /* ECHILD: none left */
        }
    }
}

/* Reaps what ended of the leftovers and polls every 5 ms for up to sec
 * seconds until none is left.  Returns 1 when none is left, 0 when some
 * still run, -1 when a signal to resmon cut the wait short (only where
 * heed_signals: ending them, which takes at most seconds, is not cut). */
static int leftovers_end_within(run_result *unmeasured, double sec, int heed_signals)
{
    double until = clock_monotonic_sec() + sec;
    for (;;) {
        reap_exited_orphans(unmeasured);
        if (count_children() <= 0)
            return 1;
        if (heed_signals && signals_received())
            return -1;
        if (clock_monotonic_sec() >= until)
            return 0;
        struct timespec pause = {0, 5000000};
        nanosleep(&pause, NULL);
    }
}

/* The distinct processes run_end_leftovers signalled: a leftover that
 * survives a SIGTERM is sent SIGKILL too, and counted once. */
typedef struct {
    pid_t pids[1024];
    int count; /* may exceed the array: past it, each is counted as new */
} signalled_set;

static void signalled_add(signalled_set *set, pid_t pid)
{
    int known = set->count < 1024 ? set->count : 1024;
    for (int i = 0; i < known; i++)
        if (set->pids[i] == pid)
            return;
    if (set->count < 1024)
        set->pids[set->count] = pid;
    set->count++;
}

/* Sends sig to every child still running, adding each to set; returns how
 * many it was sent to, and sets *refused to how many kill refused (EPERM). */
static int signal_leftovers(int sig, signalled_set *set, int *refused)
{
    pid_t pids[256];
    int n = list_children(pids, 256);
    int sent = 0;
    *refused = 0;
    for (int i = 0; i < n && i < 256; i++) {
        if (kill(pids[i], sig) == 0) {
            signalled_add(set, pids[i]);
            sent++;
        } else if (errno == EPERM) {
            (*refused)++;
        }
    }
    return sent;
}

/* The state letter of /proc/PID/stat ('Z', 'D', 'S'...), or 0. */
static char process_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')'); /* the name may hold anything but ends at the last ')' */
    return close_paren && close_paren[1] == ' ' ? close_paren[2] : 0;
}

int run_end_leftovers(double grace_sec, leftover_outcome *out)
{
    run_result unmeasured;
    memset(&unmeasured, 0, sizeof unmeasured);
    memset(out, 0, sizeof *out);
    signalled_set set;
    set.count = 0;
    int done = leftovers_end_within(&unmeasured, grace_sec, 1);
    /* A signal ends the grace, not the ending: what the repeat would have
     * ended after it is ended now, not left running past resmon's exit. */
    out->cut_short = done < 0;
    if (done < 0)
        done = 0;
    /* A leftover that ends makes its own children resmon's: each pass
     * signals those too.  A pass that could signal none (kill refused with
     * EPERM: a child that became another user while resmon lacks
     * CAP_KILL) ends the tries: more passes would only wait, 11 s a run. */
    for (int pass = 0; done == 0 && pass < 10; pass++) {
        int sent = signal_leftovers(SIGTERM, &set, &out->refused);
        done = leftovers_end_within(&unmeasured, 0.1, 0);
        if (sent == 0)
            break;
    }
    /* A process SIGKILL does not end (in uninterruptible sleep, or in a
     * frozen cgroup v1) is sent it again each pass: it ends when it wakes.
     * What still runs after the last pass is told apart from a refusal. */
    int last_sent = 0;
    for (int pass = 0; done == 0 && pass < LEFTOVER_KILL_SEC * 10; pass++) {
        last_sent = signal_leftovers(SIGKILL, &set, &out->refused);
        out->killed += last_sent;
        done = leftovers_end_within(&unmeasured, 0.1, 0);
        if (last_sent == 0)
            break;
    }
    if (done != 0) {
        out->refused = 0;
    } else {
        /* A zombie takes the signal (kill succeeds) and cannot be reaped
         * while a tracer holds it: it ended, and is said so. */
        pid_t pids[256];
        int n = list_children(pids, 256);
        for (int i = 0; i < n && i < 256; i++)
            out->held += process_state(pids[i]) == 'Z';
        out->unheeded = last_sent > out->held ? last_sent - out->held : 0;
    }
    out->ended = set.count;
    return done;
}

/* The limit on open files resmon started with: the library raises the soft
 * one for a wide tree (it keeps a few files open a process), and the
 * commands resmon runs get the one their caller gave them. */
static struct rlimit open_files_at_start;
static int open_files_known;

void run_note_start_limits(void)
{
    open_files_known = getrlimit(RLIMIT_NOFILE, &open_files_at_start) == 0;
}

/* Reaps a command that never ran (exec failed, or the monitor did not
 * start): its status is resmon's own, so only EINTR needs care. */
static void reap_unstarted(pid_t child)
{
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* Child side of the fork: joins its own process group and, with a leaf
 * cgroup, the leaf (sending how that went: an int, 0 or a negative errno),
 * waits for the go byte (so that the monitor's first sample and the
 * terminal hand-over precede any work), then execs; on failure sends errno
 * back. */
static void exec_child(const cli_options *o, const resmon_cgroup *cg, int go_read, int error_write)
{
    setpgid(0, 0);
    signals_restore_for_exec();
    if (cg) {
        int joined = resmon_cgroup_join(cg, 0); /* this process, single-threaded: the kernel's cheap move */
        if (write(error_write, &joined, sizeof joined) != (ssize_t)sizeof joined)
            _exit(EXIT_USAGE);
    }
    char go;
    ssize_t n;
    do {
        n = read(go_read, &go, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1)
        _exit(EXIT_USAGE); /* resmon died before saying go */
    if (open_files_known)
        (void)setrlimit(RLIMIT_NOFILE, &open_files_at_start);
    execvp(o->argv[0], o->argv);
    int err = errno;
    if (write(error_write, &err, sizeof err) < 0)
        _exit(EXIT_CANNOT_EXECUTE);
    _exit(err == ENOENT || err == ENOTDIR ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE);
}

/* What the held child said of joining its leaf (exec_child): 0 or a
 * negative errno; -ESRCH when it ended without a word. */
static int join_result(int error_read)
{
    int joined = 0;
    ssize_t n;
    do {
        n = read(error_read, &joined, sizeof joined);
    } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof joined ? joined : -ESRCH;
}

/* Reaps the command and records its status and accounting.  Returns 0, or
 * -errno when the kernel has no status to give (the status is then unknown,
 * never made up). */
static int reap_command(pid_t child, const cli_options *o, run_result *r)
{
    int status = 0;
    struct rusage usage;
    pid_t got;
    char comm[PROCESS_COMM_MAX];
    zombie_comm(child, comm, sizeof comm);
    while ((got = wait4(child, &status, 0, &usage)) < 0 && errno == EINTR)
        ;
    if (got != child)
        return got < 0 ? -errno : -ECHILD;
    if (r->processes)
        process_records_wait4(r->processes, child, comm, status, &usage, clock_monotonic_sec());
    r->have_exit = 1;
    if (WIFSIGNALED(status)) {
        r->term_signal = WTERMSIG(status);
        r->exit_status = 128 + r->term_signal;
    } else {
        r->exit_status = WEXITSTATUS(status);
    }
    /* wait4 accounts the command and everything it reaped: with
     * --no-children that is not "the process alone", so it is left out. */
    if (o->include_children) {
        r->have_rusage = 1;
        add_usage(r, &usage);
    }
    return 0;
}

/* After a signal cut --wait-orphans short (it was forwarded to the
 * command's group): reaps those it ended, allowing them up to half a second
 * to end, and returns how many still run (a zombie is not left running).
 * -1 when /proc cannot say. */
static int orphans_after_signal(run_result *r)
{
    for (int tries = 0; tries < 100; tries++) {
        reap_exited_orphans(r);
        if (count_children() <= 0)
            break;
        struct timespec pause = {0, 5000000};
        nanosleep(&pause, NULL);
    }
    reap_exited_orphans(r);
    return count_children();
}

/* Appends to *pids (count, cap: grown) the children of pid, read from each
 * of its threads' children list.  -1 when out of memory. */
static int append_children_of(pid_t pid, pid_t **pids, size_t *count, size_t *cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    if (!tasks)
        return 0; /* ended meanwhile */
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(tasks)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char children[300];
        snprintf(children, sizeof children, "/proc/%d/task/%s/children", (int)pid, e->d_name);
        FILE *f = fopen(children, "re");
        int child;
        while (rc == 0 && f && fscanf(f, "%d", &child) == 1) {
            if (*count == *cap) {
                size_t grown = *cap ? 2 * *cap : 64;
                pid_t *more = realloc(*pids, grown * sizeof *more);
                if (!more) {
                    rc = -1;
                    break;
                }
                *pids = more;
                *cap = grown;
            }
            (*pids)[(*count)++] = child;
        }
        if (f)
            fclose(f);
    }
    closedir(tasks);
    return rc;
}

/* Every process below resmon now (what the command left and what those
 * started), at most DESCENDANTS_CHECKED; *count of them in the array
 * returned (NULL when none, or out of memory). */
#define DESCENDANTS_CHECKED 65536
static pid_t *list_descendants(size_t *count)
{
    pid_t *pids = NULL;
    size_t cap = 0;
    *count = 0;
    if (append_children_of(getpid(), &pids, count, &cap) < 0)
        return pids;
    for (size_t i = 0; i < *count && *count < DESCENDANTS_CHECKED; i++)
        if (append_children_of(pids[i], &pids, count, &cap) < 0)
            break;
    return pids;
}

/* --memory-limit binds what the command leaves running only in its leaf:
 * one of them, or a process one of them started, that was moved into
 * another cgroup (as root it may) runs unbound, which is said.  Checked
 * when the command has exited, for those still running; one moved out that
 * ended before, or that moves later (under --wait-orphans), is not seen. */
static void check_moved_out(const resmon_cgroup *cg, run_result *r)
{
    r->moved_out_known = 1;
    r->orphans_moved_out = 0;
    size_t n = 0;
    pid_t *pids = list_descendants(&n);
    pid_t first = 0;
    int moved = n > 0 ? cgroup_moved_out(cg, pids, n > INT_MAX ? INT_MAX : (int)n, &first) : 0;
    free(pids);
    if (moved <= 0)
        return;
    r->orphans_moved_out = moved;
    fprintf(stderr,
            "resmon: %d process%s the command left running %s moved out of its cgroup (%spid %d): "
            "--memory-limit does not bind %s, nor do the cgroup's figures count %s\n",
            moved, moved == 1 ? "" : "es", moved == 1 ? "was" : "were", moved == 1 ? "" : "the first: ", (int)first,
            moved == 1 ? "it" : "them", moved == 1 ? "it" : "them");
}

/* After the command's exit: reaps the orphans that are done, waits for the
 * rest with --wait-orphans, and says how many are left running.  Returns
 * whether any process of the tree outlived the monitor's window (reaped
 * since, waited for, or still running). */
static int settle_orphans(const cli_options *o, const resmon_cgroup *cg, pid_t group, run_result *r)
{
    int outlived = reap_exited_orphans(r);
    int left = count_children();
    if (cg && o->memory_limit_bytes)
        check_moved_out(cg, r);
    outlived += left != 0; /* -1, unknown: maybe */
    int cut_short = 0;
    if (left > 0 && o->wait_orphans) {
        signals_forward_to(0, group); /* they may still be in the command's group */
        wait_for_orphans(r);
        signals_forward_to(0, 0);
        cut_short = signals_received() != 0;
        left = cut_short ? orphans_after_signal(r) : count_children();
    }
    r->orphans_left = left > 0 ? left : 0;
    if (left > 0 && cut_short)
        fprintf(stderr, "resmon: the wait for the command's orphans was cut short by SIG%s: %d process%s still run%s; "
                        "not measured further\n",
                sigabbrev_np(signals_received()) ? sigabbrev_np(signals_received()) : "?", left, left == 1 ? "" : "es", left == 1 ? "s" : "");
    else if (cut_short)
        fprintf(stderr, "resmon: the wait for the command's orphans was cut short by SIG%s: none still runs\n",
                sigabbrev_np(signals_received()) ? sigabbrev_np(signals_received()) : "?");
    else if (left > 0 && o->leftovers_said_after)
        r->orphans_unsaid = 1; /* the repeat says them, with what it does about them */
    else if (left > 0)
        run_say_orphans_left(left);
    return outlived > 0;
}

void run_say_orphans_left(int left)
{
    fprintf(stderr, "resmon: %d process%s started by the command still run%s%s\n", left, left == 1 ? "" : "es",
            left == 1 ? "s" : "",
            getpid() == 1 ? " and end with resmon (PID 1 of this namespace)"
                          : "; not measured further (--wait-orphans waits for them)");
}

/* Forks the command in a process group of its own (and into cg, when not
 * NULL), held before exec until a byte arrives on *go_write; the join's
 * result, then exec's errno come back on *error_read.  Returns the pid, or
 * prints one line and returns -1. */
static pid_t spawn_held(const cli_options *o, const resmon_cgroup *cg, int *go_write, int *error_read)
{
    int go[2], error_pipe[2];
    if (pipe2(go, O_CLOEXEC) != 0 || pipe2(error_pipe, O_CLOEXEC) != 0) {
        fprintf(stderr, "resmon: cannot create a pipe: %s\n", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "resmon: cannot fork: %s\n", strerror(errno));
        return -1;
    }
    if (child == 0) {
        close(go[1]);
        close(error_pipe[0]);
        exec_child(o, cg, go[0], error_pipe[1]);
    }
    close(go[0]);
    close(error_pipe[1]);
    setpgid(child, child); /* both sides set it: no race with the go byte */
    *go_write = go[1];
    *error_read = error_pipe[0];
    return child;
}

/* The window's first reading (CLOCK_MONOTONIC), which the library's
 * process records count from: the command keeps one sample (the stop's,
 * the last: duration_sec after the first) unless every sample is kept;
 * NAN when neither tells. */
static double window_first_reading(const resmon_monitor *m, const resmon_summary *s)
{
    resmon_sample oldest;
    ssize_t kept = resmon_monitor_get_samples(m, &oldest, 1, sizeof oldest);
    if (kept < 1)
        return NAN;
    if ((uint64_t)kept == s->num_samples)
        return oldest.timestamp;
    if (kept == 1)
        return oldest.timestamp - s->duration_sec;
    return NAN;
}

/* Without taskstats, what the library's walk saw of the tree joins the
 * records that resmon reaps (process_records_sampled). */
static void take_sampled_records(process_records *records, const resmon_monitor *m, const resmon_summary *s)
{
    resmon_process sampled[RESMON_MAX_PROCESSES];
    uint64_t seen = 0;
    ssize_t n = resmon_monitor_get_processes(m, sampled, RESMON_MAX_PROCESSES, sizeof *sampled, &seen);
    if (n >= 0) /* a monitor of one process (-ENOTSUP) has none */
        process_records_sampled(records, sampled, (size_t)n < RESMON_MAX_PROCESSES ? (size_t)n : RESMON_MAX_PROCESSES,
                                seen, window_first_reading(m, s));
}

int run_command(const cli_options *o, outputs *out, run_result *r)
{
    signals_prepare();
    /* Fails only before Linux 3.4: then orphans go to init, as before. */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    /* What the unwind at done releases, each only once taken. */
    resmon_cgroup *cg = NULL; /* the command's leaf cgroup */
    resmon_monitor *m = NULL;
    terminal_lease tty = {.fd = -1};
    taskstats_listener *listener = NULL; /* every exit's record, while COMMAND's tree runs */
    int go_write = -1, error_read = -1;
    pid_t held = -1; /* forked but not running COMMAND: killed and reaped at done */
    int status = cgroup_for_command(o, r, &cg);
    if (status != 0)
        goto done;
    /* COMMAND joins the leaf itself, held before exec, and says how that
     * went.  (Forking it from a resmon thread moved into a v1 leaf saved the
     * wait for the child to run, but the thread-group leader's faults and the
     * fork's kernel memory were then charged to the leaf: cgroup_peak_mb of
     * /bin/true 0.47 MiB against 0.25, and a --memory-limit below that would
     * have killed resmon.) */
    pid_t child = held = spawn_held(o, cg, &go_write, &error_read);
    if (child < 0) {
        status = EXIT_USAGE;
        goto done;
    }
    if (cg && (status = cgroup_enter(o, r, &cg, join_result(error_read))) != 0)
        goto done; /* held before exec: nothing of COMMAND ran */
    terminal_lend(&tty, child);
    signals_forward_to(child, child);

    resmon_options monitor_opts = outputs_monitor_options(o, out);
    monitor_opts.pid = child;
    /* With --no-children the exact peak is the command's own mark (exec
     * starts a fresh one), not wait4's, which includes what it reaped. */
    monitor_opts.keep_peak_mark = !o->include_children;
    monitor_opts.reset_peak_mark = !monitor_opts.keep_peak_mark;
    monitor_opts.cgroup_path = cg ? resmon_cgroup_path(cg) : o->cgroup_path;
    cgroup_counters given_at_start = {0}; /* a given cgroup's counters before the run (its own leaf's start at 0) */
    if (!cg && o->cgroup_path)
        cgroup_counters_at_start(o->cgroup_path, &given_at_start);
    int rc = outputs_monitor_new(out, &monitor_opts, &m);
    if (rc == 0)
        rc = resmon_monitor_start(m);
    if (rc < 0) {
        fprintf(stderr, "resmon: cannot monitor the command: %s\n", resmon_strerror(rc));
        status = EXIT_USAGE;
        goto done;
    }
    /* Registered (and acked) before the go byte: no exit of the tree is
     * missed.  Without CAP_NET_ADMIN (-EPERM) or taskstats (-ENOENT), the
     * records are the processes resmon reaps. */
    int listening = r->processes ? taskstats_start(process_records_taskstats, r->processes, &listener) : 0;
    r->start_wall_epoch = outputs_start_wall_epoch(m);
    double start = clock_monotonic_sec();
    r->command_pid = child;
    r->command_start_timestamp = start;
    if (r->processes)
        process_records_start(r->processes, start, listening);
    if (write(go_write, "g", 1) != 1) {
        /* cannot happen while the child lives; it exits 125 on EOF */
    }
    close(go_write);
    go_write = -1;

    int exec_errno = 0;
    ssize_t n;
    do {
        n = read(error_read, &exec_errno, sizeof exec_errno);
    } while (n < 0 && errno == EINTR);
    close(error_read);
    error_read = -1;
    if (n == (ssize_t)sizeof exec_errno) {
        status = exec_failure_report(o->argv[0], exec_errno);
        goto done;
    }
    held = -1; /* COMMAND runs: from here it is reaped by reap_command, never killed */
    /* A name that cannot be taken now is said once and fails the outputs
     * at the end (125 unless the command failed): the command runs already. */
    outputs_command_started(out);

    rc = wait_for_exit(child, &tty, r);
    r->command_end_timestamp = clock_monotonic_sec();
    r->wall_sec = r->command_end_timestamp - start;
    outputs_marks_drain(out); /* marks sent before the exit belong to the window */
    resmon_monitor_stop(m);
    resmon_monitor_get_summary(m, &r->summary, sizeof r->summary);
    if (r->processes && listening < 0)
        take_sampled_records(r->processes, m, &r->summary);
    outputs_collect_phases(out, m, r);
    outputs_monitor_free(out, m);
    m = NULL;
    signals_forward_to(0, 0); /* before the reap: its pid may be reused after */
    if (rc == 0)
        rc = reap_command(child, o, r);
    terminal_take_back(&tty);
    if (rc < 0) { /* the outputs are still written, with the status unknown */
        fprintf(stderr, "resmon: cannot read the command's exit status: %s\n", strerror(-rc));
        if (!cg && o->cgroup_path)
            cgroup_counters_since(&given_at_start, &r->summary);
        goto done;
    }
    int outlived = settle_orphans(o, cg, child, r);
    /* What the orphans did in the cgroup since the window's end: the run's
     * span covers their wait (a given cgroup's kills in it were lost:
     * review 71). */
    if (outlived)
        cgroup_read_to_end(cg ? resmon_cgroup_path(cg) : o->cgroup_path, cg != NULL, r);
    if (!cg && o->cgroup_path)
        cgroup_counters_since(&given_at_start, &r->summary);
    if (o->wait_orphans)
        r->wall_sec = clock_monotonic_sec() - start;

    r->wait4_maxrss_mb = NAN;
    if (r->have_rusage) {
        /* The kernel's peak of the largest process is the exact peak for
         * this window: the command's life is the window -- unless a sample
         * saw one process above it (the library's figure is never below a
         * process's sampled RSS): that process reset its mark (clear_refs,
         * faults.md 24) or was never reaped (an orphan left running).  The
         * larger figure is then the peak, and it is said to be sampled. */
        double seen = r->summary.hwm_rss_mb;
        if (!isnan(seen) && seen > r->rusage_maxrss_mb + 1.0) {
            r->wait4_maxrss_mb = r->rusage_maxrss_mb;
            r->rusage_maxrss_mb = seen;
        }
        r->summary.hwm_rss_mb = r->rusage_maxrss_mb;
        r->summary.hwm_scope = RESMON_HWM_WINDOW;
        keep_kernel_switches(r);
    }
done:
    /* Every process of the tree is reaped here (or left running): every
     * exit's record was sent before its reap, and the stop drains them. */
    if (r->processes)
        process_records_finish(r->processes, taskstats_stop(listener)); /* accepts NULL */
    if (m) /* stopped before the exporters let go of it, so its summary and last sample agree */
        resmon_monitor_stop(m);
    outputs_monitor_free(out, m); /* accepts NULL */
    signals_forward_to(0, 0);
    if (go_write >= 0)
        close(go_write);
    if (error_read >= 0)
        close(error_read);
    if (held > 0) {
        kill(held, SIGKILL); /* still held before exec, or exec failed: nothing of it ran */
        reap_unstarted(held);
    }
    terminal_take_back(&tty);
    cgroup_check_limit(o, cg, r);
    cgroup_done(o, cg, r); /* accepts NULL; what still runs in it stays under --memory-limit, else moves out */
    if (status == 0)
        r->interrupted = signals_received() != 0;
    return status;
}
