/*
 * vm_floor.c -- what the cheapest sampler could cost on this machine
 * (issue 33: the leaf's goal of 0.2 ms a sample at 1000 processes, and
 * resmon --pid against prmon at 1000).
 *
 *   resmon_vm_floor [N]     (default: 1000 sleeping children)
 *
 * Prints, as the calling thread's own CPU time:
 *   - a wake-up every 100 ms in pthread_cond_timedwait (the sampler's slot
 *     wait), alone and with three preads of small /proc files (the leaf's
 *     sample reads three: cpuacct.usage, memory.usage_in_bytes, the
 *     command's statm);
 *   - one clock_gettime of another process's CPU clock (the one system call
 *     a sleeping process costs resmon --pid), over N sleeping children.
 * No resmon code runs: these are the calls alone, the floor under
 * resmon's own figures (BENCHMARKS.md, "Issue 33 at stop 64").
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAKE_UPS 50
#define CLOCK_ROUNDS 20

static double thread_cpu_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* The CPU of one wake-up every 100 ms, with reads preads of small files. */
static double wake_up_us(int reads)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cond;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&cond, &attr);
    const char *paths[] = {"/proc/self/statm", "/proc/self/stat", "/proc/loadavg"};
    int fds[3];
    for (int i = 0; i < 3; i++)
        fds[i] = open(paths[i], O_RDONLY | O_CLOEXEC);
    char text[512];
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    double start = thread_cpu_us();
    for (int i = 0; i < WAKE_UPS; i++) {
        at.tv_nsec += 100000000;
        if (at.tv_nsec >= 1000000000) {
            at.tv_sec++;
            at.tv_nsec -= 1000000000;
        }
        pthread_mutex_lock(&lock);
        pthread_cond_timedwait(&cond, &lock, &at);
        pthread_mutex_unlock(&lock);
        for (int k = 0; k < reads; k++)
            if (pread(fds[k % 3], text, sizeof text, 0) < 0)
                perror("pread");
    }
    double spent = thread_cpu_us() - start;
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    pthread_cond_destroy(&cond);
    return spent / WAKE_UPS;
}

/* Another process's CPU clock (the kernel's MAKE_PROCESS_CPUCLOCK, as
 * clock_getcpuclockid gives it: sched runtime). */
static clockid_t process_clock(pid_t pid)
{
    clockid_t clock;
    return clock_getcpuclockid(pid, &clock) == 0 ? clock : CLOCK_MONOTONIC;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    if (n < 1 || n > 100000) {
        fprintf(stderr, "usage: %s [N: 1 to 100000 sleeping children]\n", argv[0]);
        return 2;
    }
    printf("wake-up every 100 ms: %.1f us of CPU; with 3 preads: %.1f us\n", wake_up_us(0), wake_up_us(3));
    pid_t *kids = calloc((size_t)n, sizeof *kids);
    clockid_t *clocks = calloc((size_t)n, sizeof *clocks);
    if (!kids || !clocks)
        return 1;
    long made = 0;
    for (; made < n; made++) {
        kids[made] = fork();
        if (kids[made] == 0) {
            pause();
            _exit(0);
        }
        if (kids[made] < 0)
            break;
        clocks[made] = process_clock(kids[made]);
    }
    double start = thread_cpu_us();
    long long sum = 0;
    for (int r = 0; r < CLOCK_ROUNDS; r++)
        for (long i = 0; i < made; i++) {
            struct timespec t;
            clock_gettime(clocks[i], &t);
            sum += t.tv_nsec & 1;
        }
    double spent = thread_cpu_us() - start;
    if (made > 0)
        printf("another process's CPU clock: %.2f us a read; %ld sleepers: %.2f ms a round (%lld)\n",
               spent / (double)(CLOCK_ROUNDS * made), made, spent / CLOCK_ROUNDS / 1e3, sum & 1);
    for (long i = 0; i < made; i++)
        kill(kids[i], SIGKILL);
    while (wait(NULL) > 0) {
    }
    free(kids);
    free(clocks);
    return 0;
}
