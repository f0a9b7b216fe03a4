/*
 * output_paths.c -- refusing two outputs that name one file.
 *
 * "-o run.csv -s run.csv" would interleave two formats in one file, so the
 * outputs are compared before anything starts.  Two paths are one file when
 * they stat to the same device and inode (hard links, symbolic links, "./"
 * spellings of an existing file) or, for a file not created yet, when the
 * directory it will be made in is the same (by device and inode, reached by
 * the walk that opens it) and so is the name ("new.json" and "./new.json",
 * or "a/new.json" and "b/new.json" where b is a bind mount of a).  "-"
 * (stdout) counts as one file too, and as the file, pipe or terminal it
 * is.  The readers that write (plot -o, compare's standard output) use the
 * same check: an output that is one of their inputs would
 * replace what they are reading.  The null device is the one file that two
 * outputs may share ("-s /dev/null --trace /dev/null", by any name: it is
 * known by its device number): it keeps nothing, so nothing interleaves in
 * it and nothing is replaced.  Any other device (a terminal, /dev/full, a
 * serial line) is one file as a regular file is, known by its device number
 * whatever node names it (/dev/tty by the terminal behind it).
 */
#include "output_paths.h"
#include "cli.h"
#include "output_file.h"
#include "path_checked.h"
#include "text_output.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

/* How an output is known: an existing file by what stat says, a new one
 * by the directory it will be made in and its name there.  Neither is ever
 * a path's text, which is one of many spellings of a directory (a bind
 * mount, another mount of the file system, /proc/PID/root) and cut where
 * it is longer than PATH_MAX; only a path resmon cannot walk (its directory
 * is missing: the output is refused when opened) is compared as written. */
typedef enum { KNOWN_AS_WRITTEN, KNOWN_BY_INODE, KNOWN_BY_DIRECTORY } identity_kind;

typedef struct output_identity {
    identity_kind kind;
    int discards; /* the null device: what is written to it is gone */
    int device_kind; /* 0: a file, known by device and inode; S_IFCHR or S_IFBLK: a device, by its number */
    dev_t device;    /* the file system's (a file's, or a new file's directory's), or the device's number */
    ino_t inode;     /* a file's, or a new file's directory's; 0 for a device */
    char name[NAME_MAX + 1]; /* a new file's name in that directory */
    const char *written;     /* the path as given (KNOWN_AS_WRITTEN) */
} output_identity;

/* /dev/tty (5,0) and /dev/console (5,1) are aliases: the kernel opens the
 * controlling terminal or the console's device through them.  TIOCGDEV says
 * which that is, so "-o - -s /dev/tty" on a terminal is one file.  Any
 * other device number, or an alias that cannot be opened (no controlling
 * terminal), is itself. */
static dev_t terminal_behind(dev_t number)
{
    if (major(number) != 5 || minor(number) > 1)
        return number;
    int fd = open(minor(number) == 0 ? "/dev/tty" : "/dev/console", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return number;
    unsigned int real = 0;
    int ok = ioctl(fd, TIOCGDEV, &real) == 0;
    close(fd);
    return ok ? (dev_t)real : number;
}

/* An existing file, or a device by its number. */
static void identify_stat(const struct stat *st, output_identity *id)
{
    id->kind = KNOWN_BY_INODE;
    id->discards = S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && minor(st->st_rdev) == 3;
    id->device = st->st_dev;
    id->inode = st->st_ino;
    /* A device is known by its number, whatever node names it (a
     * terminal is /dev/pts/3 and, through a copy made with mknod, any
     * other path). */
    if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) {
        id->device_kind = (int)(st->st_mode & S_IFMT); /* char 1:3 is not block 1:3 */
        id->device = S_ISCHR(st->st_mode) ? terminal_behind(st->st_rdev) : st->st_rdev;
        id->inode = 0;
    }
}

static void identify(const char *path, output_identity *id)
{
    memset(id, 0, sizeof *id);
    id->kind = KNOWN_AS_WRITTEN;
    id->written = path;
    struct stat st;
    /* "-" is standard output: whatever it is (`> run.csv`, `| jq`, the
     * terminal: -s /dev/stdout would interleave into it). */
    int is_stdout = strcmp(path, "-") == 0; /* as given: a link's target named "-" is a file */
    if (is_stdout ? fstat(STDOUT_FILENO, &st) == 0 : stat(path, &st) == 0) {
        identify_stat(&st, id);
        return;
    }
    if (is_stdout)
        return; /* stdout closed: "-" is still one file with "-" */
    /* A name that does not exist is found by the walk output_file_open
     * makes: it may be a dangling link, and the file an output makes
     * through it is its target's (-o d.json --plot t.json with d.json ->
     * t.json wrote both into t.json).  The directory the walk holds is the
     * one the file will be made in, known by its inode whatever path
     * reaches it. */
    path_place place;
    if (path_place_checked(path, &place) != 0)
        return;
    struct stat dir;
    if (place.exists) {
        identify_stat(&place.st, id); /* there after all (made since the stat) */
    } else if (fstat(place.dir_fd, &dir) == 0) {
        id->kind = KNOWN_BY_DIRECTORY;
        id->device = dir.st_dev;
        id->inode = dir.st_ino;
        snprintf(id->name, sizeof id->name, "%s", place.name);
    }
    path_place_release(&place);
}

int path_has_extension(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n >= e && strcasecmp(path + n - e, ext) == 0;
}

static int same_file(const output_identity *a, const output_identity *b)
{
    if (a->discards || b->discards)
        return 0; /* nothing written to it stays: it is no one's file */
    if (a->kind != b->kind)
        return 0; /* a file that exists is never one that does not */
    if (a->kind == KNOWN_AS_WRITTEN)
        return strcmp(a->written, b->written) == 0;
    return a->device_kind == b->device_kind && a->device == b->device && a->inode == b->inode &&
           strcmp(a->name, b->name) == 0;
}

int output_paths_check(const char *program, const char *const *paths, const char *const *options,
                       size_t output_count, size_t count)
{
    output_identity *ids = calloc(count ? count : 1, sizeof *ids);
    if (!ids) {
        fprintf(stderr, "%s: out of memory\n", program);
        return EXIT_USAGE;
    }
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        if (!paths[i])
            continue;
        identify(paths[i], &ids[i]);
        for (size_t j = 0; j < i; j++) {
            if (!paths[j] || (i >= output_count && j >= output_count) || !same_file(&ids[i], &ids[j]))
                continue;
            fprintf(stderr, "%s: %s '", program, options[j]);
            print_printable(stderr, paths[j]);
            fprintf(stderr, "' and %s '", options[i]);
            print_printable(stderr, paths[i]);
            if (i < output_count)
                fprintf(stderr, "' name the same file: give each output its own (see %s --help)\n", program);
            else
                fprintf(stderr, "' name the same file: an output never replaces an input (see %s --help)\n",
                        program);
            rc = EXIT_USAGE;
            break;
        }
    }
    free(ids);
    return rc;
}

int output_paths_check_distinct(const char *const *paths, const char *const *options, size_t count)
{
    return output_paths_check("resmon", paths, options, count, count);
}
