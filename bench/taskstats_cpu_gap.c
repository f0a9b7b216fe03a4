/*
 * taskstats_cpu_gap.c -- where the CPU of short processes goes between
 * their taskstats record and wait4 (issue 34, item 3: "the per-process CPU
 * sums to wait4's cpu_sec within 1 %", which a loop of short processes does
 * not).  Needs CAP_NET_ADMIN (root).
 *
 *   resmon_taskstats_gap [N [PROGRAM]]     (default: 300 /bin/true)
 *
 * Each row forks and execs N children one after another, reads each one's
 * runtime while it is a zombie (/proc/PID/schedstat: the scheduler's total,
 * all of its exit included) and reaps it (wait4's rusage), beside its
 * taskstats record (cpu_run_virtual_total, the scheduler's runtime when
 * the kernel made the record; ac_utime + ac_stime, tick samples):
 *   PROGRAM        the program given
 *   spin           this program, ~3 ms of a busy loop that asks no clock,
 *                  then _exit
 *   spin, sleep    the same with a 1 us sleep before _exit: switching out
 *                  brings the scheduler's runtime up to date, so the record
 *                  misses only the exit's own work
 * and the last row is the loop: sh running N PROGRAM, the records
 * of sh and its children against wait4's figure for sh.
 */
#include "taskstats.h"

#include <linux/taskstats.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RECORDS_MAX 100000

typedef struct record {
    pid_t pid, ppid;
    double runtime_sec, ticks_sec;
} record;

static record records[RECORDS_MAX];
static size_t record_count;
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_record(const struct taskstats *ts, void *user)
{
    (void)user;
    if (!ts)
        return; /* records were lost (an overrun): the listener counts them */
    pthread_mutex_lock(&records_lock);
    if (record_count < RECORDS_MAX)
        records[record_count++] = (record){
            .pid = (pid_t)ts->ac_pid,
            .ppid = (pid_t)ts->ac_ppid,
            .runtime_sec = (double)ts->cpu_run_virtual_total * 1e-9,
            .ticks_sec = (double)(ts->ac_utime + ts->ac_stime) * 1e-6,
        };
    pthread_mutex_unlock(&records_lock);
}

static const record *record_of(pid_t pid)
{
    for (size_t i = record_count; i-- > 0;) /* the latest: pids are reused */
        if (records[i].pid == pid)
            return &records[i];
    return NULL;
}

static double zombie_runtime_sec(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
    FILE *f = fopen(path, "re");
    unsigned long long ns = 0;
    if (f) {
        if (fscanf(f, "%llu", &ns) != 1)
            ns = 0;
        fclose(f);
    }
    return (double)ns * 1e-9;
}

static double rusage_sec(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec * 1e-6 + (double)ru->ru_stime.tv_sec +
           (double)ru->ru_stime.tv_usec * 1e-6;
}

/* Runs argv to its exit; its zombie's runtime and wait4's figure. */
static pid_t run_child(char *const *argv, double *zombie_sec, double *wait4_sec)
{
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    siginfo_t info;
    if (pid < 0 || waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) != 0)
        return -1;
    *zombie_sec = zombie_runtime_sec(pid);
    struct rusage ru;
    if (wait4(pid, NULL, 0, &ru) != pid)
        return -1;
    *wait4_sec = rusage_sec(&ru);
    return pid;
}

typedef struct row_sums {
    double runtime, ticks, zombie, wait4;
    int children, recorded;
} row_sums;

static void print_row(const char *what, const row_sums *s)
{
    int n = s->recorded ? s->recorded : 1;
    printf("| %s | %d/%d | %.0f | %.0f | %.0f | %.0f | %.1f %% | %.0f | %.0f |\n", what, s->recorded, s->children,
           s->runtime / n * 1e6, s->ticks / n * 1e6, s->zombie / n * 1e6, s->wait4 / n * 1e6,
           100 * s->runtime / s->wait4, (s->zombie - s->runtime) / n * 1e6, (s->wait4 - s->zombie) / n * 1e6);
}

static void children_row(const char *what, char *const *argv, int n)
{
    row_sums s = {0};
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    double *zombie = calloc((size_t)n, sizeof *zombie), *reaped = calloc((size_t)n, sizeof *reaped);
    if (!pids || !zombie || !reaped)
        exit(1);
    for (int i = 0; i < n; i++)
        pids[i] = run_child(argv, &zombie[i], &reaped[i]);
    usleep(100000); /* the listener's thread reads the last records */
    pthread_mutex_lock(&records_lock);
    for (int i = 0; i < n; i++) {
        const record *r = pids[i] > 0 ? record_of(pids[i]) : NULL;
        s.children++;
        if (!r)
            continue;
        s.recorded++;
        s.runtime += r->runtime_sec;
        s.ticks += r->ticks_sec;
        s.zombie += zombie[i];
        s.wait4 += reaped[i];
    }
    pthread_mutex_unlock(&records_lock);
    print_row(what, &s);
    free(pids);
    free(zombie);
    free(reaped);
}

static void shell_row(const char *program, int n)
{
    char loop[512];
    snprintf(loop, sizeof loop, "i=0; while [ $i -lt %d ]; do %s; i=$((i+1)); done", n, program);
    char *argv[] = {"/bin/sh", "-c", loop, NULL};
    row_sums s = {0};
    pid_t sh = run_child(argv, &s.zombie, &s.wait4);
    usleep(100000);
    pthread_mutex_lock(&records_lock);
    for (size_t i = 0; i < record_count; i++)
        if (sh > 0 && (records[i].pid == sh || records[i].ppid == sh)) {
            s.recorded++;
            s.runtime += records[i].runtime_sec;
            s.ticks += records[i].ticks_sec;
        }
    pthread_mutex_unlock(&records_lock);
    s.children = n + 1;
    /* The zombie column is sh's own here; per process, the tree's. */
    double sh_own = s.zombie;
    s.zombie = s.wait4;
    char what[600];
    snprintf(what, sizeof what, "sh looping %s (sh's own %.0f us)", program, sh_own * 1e6);
    print_row(what, &s);
}

/* The children of the spin rows. */
static int spin(int sleep_before_exit)
{
    static volatile unsigned long spins;
    for (unsigned long i = 0; i < 3000000ul; i++)
        spins++;
    if (sleep_before_exit) {
        struct timespec microsecond = {0, 1000};
        nanosleep(&microsecond, NULL);
    }
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--spin") == 0)
        return spin(0);
    if (argc == 2 && strcmp(argv[1], "--spin-sleep") == 0)
        return spin(1);
    int n = argc > 1 ? atoi(argv[1]) : 300;
    char *program = argc > 2 ? argv[2] : "/bin/true";
    if (n < 1) {
        fprintf(stderr, "usage: resmon_taskstats_gap [N [PROGRAM]]\n");
        return 2;
    }
    char self[4096];
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0)
        return 1;
    self[length] = '\0';
    taskstats_listener *listener;
    int rc = taskstats_start(on_record, NULL, &listener);
    if (rc < 0) {
        fprintf(stderr, "resmon_taskstats_gap: taskstats: %s (needs CAP_NET_ADMIN)\n", strerror(-rc));
        return 1;
    }
    printf("Per process, microseconds of CPU: the record's runtime and ticks, the zombie's runtime, wait4's.\n\n");
    printf("| children | recorded | record runtime | record ticks | zombie | wait4 | record/wait4 | zombie - record "
           "| wait4 - zombie |\n|---|---|---|---|---|---|---|---|---|\n");
    char *program_argv[] = {program, NULL};
    children_row(program, program_argv, n);
    char *spin_argv[] = {self, "--spin", NULL};
    children_row("spin", spin_argv, n);
    char *sleep_argv[] = {self, "--spin-sleep", NULL};
    children_row("spin, sleep", sleep_argv, n);
    shell_row(program, n);
    printf("\noverruns (records lost): %llu\n", taskstats_stop(listener));
    return 0;
}
