/*
 * exec_failure.c -- saying why the command could not be executed.
 *
 * execve() reports ENOENT both when the file is missing and when the file
 * exists but its "#!" interpreter does not; "command not found" would then
 * send the user looking for the wrong file.  Like bash ("bad interpreter"),
 * resmon names the interpreter in that case.
 */
#include "exec_failure.h"
#include "cli.h"
#include "regular_file.h"
#include "text_output.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where execvp() found file: file itself when it names a path, else the
 * first executable of that name on PATH (the default path without one). */
static int locate(const char *file, char *found, size_t cap)
{
    if (strchr(file, '/')) {
        snprintf(found, cap, "%s", file);
        return access(found, F_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    while (*path) {
        size_t dir_len = strcspn(path, ":");
        snprintf(found, cap, "%.*s%s%s", (int)dir_len, path, dir_len ? "/" : "", file);
        if (access(found, X_OK) == 0)
            return 1;
        path += dir_len + (path[dir_len] == ':');
    }
    return 0;
}

/* The interpreter a "#!" line names, or 0 when the file has no such line. */
static int read_interpreter(const char *script, char *interpreter, size_t cap)
{
    int fd = rm__open_regular_at(AT_FDCWD, script, NULL); /* swapped for a FIFO: no wait */
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    char line[256];
    int found = fgets(line, sizeof line, f) && line[0] == '#' && line[1] == '!';
    fclose(f);
    if (!found)
        return 0;
    const char *start = line + 2 + strspn(line + 2, " \t");
    snprintf(interpreter, cap, "%.*s", (int)strcspn(start, " \t\r\n"), start);
    return interpreter[0] != '\0';
}

int exec_failure_report(const char *file, int exec_errno)
{
    char found[PATH_MAX], interpreter[256];
    fputs("resmon: ", stderr);
    print_printable(stderr, file);
    if (exec_errno == ENOENT && locate(file, found, sizeof found) &&
        read_interpreter(found, interpreter, sizeof interpreter)) {
        fputs(": ", stderr);
        print_printable(stderr, interpreter);
        fputs(": bad interpreter: No such file or directory\n", stderr);
        return EXIT_NOT_FOUND;
    }
    fprintf(stderr, ": %s\n", exec_errno == ENOENT ? "command not found" : strerror(exec_errno));
    return exec_errno == ENOENT || exec_errno == ENOTDIR ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE;
}
