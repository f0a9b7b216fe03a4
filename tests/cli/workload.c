/*
 * workload.c -- small programs for the resmon command's tests.
 *
 *   workload mem MB SECONDS          touch MB of memory, hold it SECONDS (-1: until stdin ends)
 *   workload spin SECONDS            burn SECONDS of one CPU's time
 *   workload thread-fork MB SECONDS  a worker thread forks a child that holds MB
 *   workload sleep SECONDS
 *   workload exit CODE
 *   workload trap-term CODE          wait for SIGTERM, then exit CODE
 *
 * With WORKLOAD_READY_FD=N in the environment, it writes one byte to fd N
 * once it is ready (memory touched, handler installed, about to sleep), so
 * that a test synchronises with it instead of sleeping and hoping.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void report_ready(void)
{
    const char *fd = getenv("WORKLOAD_READY_FD");
    if (fd && write(atoi(fd), "r", 1) != 1)
        exit(98);
}

static void sleep_sec(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void hold(size_t mb, double seconds)
{
    char *p = malloc(mb << 20);
    if (!p)
        exit(99);
    memset(p, 5, mb << 20);
    __asm__ volatile("" : : "r"(p) : "memory");
    report_ready();
    if (seconds < 0) { /* until stdin ends: the test's word, not a clock */
        char byte;
        while (read(STDIN_FILENO, &byte, 1) > 0 || (errno == EINTR))
            ;
    } else {
        sleep_sec(seconds);
    }
    free(p); /* else LeakSanitizer reports the block when no stale copy of p is left on the stack */
}

static size_t fork_mb;
static double fork_seconds;

static void *forker(void *arg)
{
    (void)arg;
    pid_t pid = fork();
    if (pid == 0) {
        hold(fork_mb, fork_seconds);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    return NULL;
}

static volatile sig_atomic_t got_term;
static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *mode = argv[1];
    if (strcmp(mode, "mem") == 0 && argc == 4) {
        hold((size_t)atol(argv[2]), atof(argv[3]));
    } else if (strcmp(mode, "spin") == 0) {
        /* CPU seconds, not wall seconds: on a busy machine the burn is the
         * same, so tests can compare with the kernel's accounting. */
        struct timespec t0, t;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        static volatile unsigned long spins;
        do {
            spins++;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < atof(argv[2]));
        report_ready();
    } else if (strcmp(mode, "thread-fork") == 0 && argc == 4) {
        fork_mb = (size_t)atol(argv[2]);
        fork_seconds = atof(argv[3]);
        pthread_t tid;
        pthread_create(&tid, NULL, forker, NULL);
        pthread_join(tid, NULL);
    } else if (strcmp(mode, "sleep") == 0) {
        report_ready();
        sleep_sec(atof(argv[2]));
    } else if (strcmp(mode, "exit") == 0) {
        return atoi(argv[2]);
    } else if (strcmp(mode, "trap-term") == 0) {
        signal(SIGTERM, on_term);
        report_ready();
        while (!got_term)
            pause();
        return atoi(argv[2]);
    } else {
        return 2;
    }
    return 0;
}
