/*
 * chart_png.c -- a chart asked for as .png: the SVG rendered by librsvg's
 * rsvg-convert (Debian: librsvg2-bin), found on PATH when the name is
 * checked -- before the command starts, so a missing converter is a usage
 * error, never SVG bytes under a .png name.  librsvg is not linked: the
 * command pays for it only when a PNG is asked for, and only at the end.
 * The converter writes into a memory file, copied into the output after it
 * exited: on the output itself (a FIFO whose reader stopped reading) it
 * would block, and resmon with it in waitpid, for ever.
 */
#include "chart_png.h"
#include "output_paths.h"
#include "text_output.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Looks for an executable rsvg-convert in each PATH directory, as execvp
 * would: a regular file (a directory of that name is searchable, so
 * access(X_OK) alone took it, and the spawn then failed with EACCES). */
static int find_converter(char *out, size_t cap)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        return -ENOENT;
    while (*path) {
        size_t len = strcspn(path, ":");
        int n = snprintf(out, cap, "%.*s%srsvg-convert", (int)len, len ? path : ".", len ? "/" : "");
        struct stat st;
        if (n > 0 && (size_t)n < cap && access(out, X_OK) == 0 && stat(out, &st) == 0 && S_ISREG(st.st_mode))
            return 0;
        path += len + (path[len] == ':');
    }
    out[0] = '\0';
    return -ENOENT;
}

int chart_output_check(const char *who, const char *path, const char *option, char *converter, size_t cap)
{
    static const char *const unwritten[] = {".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff", ".pdf", ".eps"};
    converter[0] = '\0';
    for (size_t i = 0; i < sizeof unwritten / sizeof *unwritten; i++)
        if (path_has_extension(path, unwritten[i])) {
            fprintf(stderr, "%s: %s '", who, option);
            print_printable(stderr, path);
            fputs("': a chart is written as SVG, or as PNG for a .png name\n", stderr);
            return -1;
        }
    if (!path_has_extension(path, ".png"))
        return 0;
    if (find_converter(converter, cap) < 0) {
        fprintf(stderr, "%s: %s '", who, option);
        print_printable(stderr, path);
        fputs("': a PNG chart needs rsvg-convert (Debian: librsvg2-bin), not found on PATH; give a .svg name "
              "for SVG\n",
              stderr);
        return -1;
    }
    return 0;
}

FILE *chart_png_begin(void)
{
    int fd = memfd_create("resmon-chart.svg", MFD_CLOEXEC);
    FILE *svg = fd >= 0 ? fdopen(fd, "w+") : NULL;
    if (fd >= 0 && !svg)
        close(fd);
    return svg;
}

/* The first line rsvg-convert wrote on stderr, for the message. */
static void first_line(int fd, char *why, size_t cap, size_t used)
{
    char text[256];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    if (n <= 0 || used + 3 >= cap)
        return;
    text[n] = '\0';
    text[strcspn(text, "\n")] = '\0';
    snprintf(why + used, cap - used, ": %s", text);
}

/* The converter's PNG into out. */
static int copy_png(int png_fd, FILE *out, const char *converter, char *why, size_t cap)
{
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    char chunk[65536];
    ssize_t n;
    if (lseek(png_fd, 0, SEEK_SET) != 0) {
        snprintf(why, cap, "cannot read the converted chart: %s", strerror(errno));
        return -1;
    }
    /* A converter that exits 0 having written nothing (or not a PNG) does
     * not make a chart: the output is not kept as if it were one. */
    int first = 1;
    while ((n = read(png_fd, chunk, sizeof chunk)) > 0) {
        if (first && ((size_t)n < sizeof signature || memcmp(chunk, signature, sizeof signature) != 0)) {
            snprintf(why, cap, "%s exited 0 but wrote no PNG", converter);
            return -1;
        }
        first = 0;
        fwrite(chunk, 1, (size_t)n, out);
    }
    if (n == 0 && first) {
        snprintf(why, cap, "%s exited 0 but wrote no PNG", converter);
        return -1;
    }
    if (n < 0) {
        snprintf(why, cap, "cannot read the converted chart: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* Whether the converter pid exited within wait's deadline; else it is
 * killed (a hung rsvg-convert held resmon in waitpid for ever) and why says
 * so.  Without pidfd_open (Linux < 5.3) it is waited for as before. */
static int converter_exited(pid_t pid, const char *converter, reader_wait *wait, char *why, size_t cap)
{
    int pidfd = wait ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    if (pidfd < 0)
        return 1;
    int exited = reader_wait_exited(wait, pidfd);
    close(pidfd);
    if (exited)
        return 1;
    kill(-pid, SIGKILL); /* its process group: what it started goes with it (a wrapper script's children) */
    snprintf(why, cap, "%s %s; the PNG was not made", converter,
             wait->stopped ? "was still running when a signal cut the wait short"
                           : "was still running when the end's 5 s ran out");
    return 0;
}

int chart_png_finish(FILE *svg, const char *converter, FILE *out, reader_wait *wait, char *why, size_t cap)
{
    int rc = -1, err_fd = -1, png_fd = -1, status = 0;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    if (fflush(svg) != 0 || ferror(svg)) {
        snprintf(why, cap, "cannot render the chart: %s", strerror(errno));
        fclose(svg);
        return -1;
    }
    err_fd = memfd_create("resmon-rsvg-stderr", MFD_CLOEXEC);
    png_fd = memfd_create("resmon-chart.png", MFD_CLOEXEC);
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    /* dup2 clears close-on-exec on the copies; the converter starts with an
     * empty signal mask and default dispositions, whatever resmon blocks. */
    posix_spawn_file_actions_adddup2(&actions, fileno(svg), 0);
    posix_spawn_file_actions_adddup2(&actions, png_fd, 1);
    if (err_fd >= 0)
        posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    /* A process group of its own, so that a kill reaches what it started
     * too (sixth review: a wrapper's child outlived the 5 s kill). */
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    char *const argv[] = {"rsvg-convert", "--format", "png", NULL};
    pid_t pid;
    if (png_fd < 0) {
        snprintf(why, cap, "cannot render the chart: %s", strerror(errno));
    } else if (lseek(fileno(svg), 0, SEEK_SET) != 0) {
        snprintf(why, cap, "cannot render the chart: %s", strerror(errno));
    } else if ((errno = posix_spawn(&pid, converter, &actions, &attr, argv, environ)) != 0) {
        snprintf(why, cap, "cannot run %s: %s", converter, strerror(errno));
    } else {
        int exited = converter_exited(pid, converter, wait, why, cap);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (!exited) {
            /* why names the hang */
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            rc = copy_png(png_fd, out, converter, why, cap);
        } else {
            int n = WIFEXITED(status) ? snprintf(why, cap, "%s exited with status %d", converter, WEXITSTATUS(status))
                                      : snprintf(why, cap, "%s was killed by signal %d", converter, WTERMSIG(status));
            if (err_fd >= 0 && n > 0)
                first_line(err_fd, why, cap, (size_t)n);
        }
    }
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    if (err_fd >= 0)
        close(err_fd);
    if (png_fd >= 0)
        close(png_fd);
    fclose(svg);
    return rc;
}
