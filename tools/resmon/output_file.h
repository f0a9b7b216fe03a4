/*
 * output_file.h -- one output file, written beside its final name and renamed
 * into place (output_file.c).
 */
#ifndef RESMON_OUTPUT_FILE_H
#define RESMON_OUTPUT_FILE_H

#include "reader_wait.h"

#include <stdio.h>
#include <sys/stat.h>

typedef struct output_file {
    const char *path;  /* as given; "-" is stdout */
    const char *what;  /* "summary file", for messages */
    FILE *stream;      /* NULL when not open */
    char *temp_path;   /* resmon's temporary file until renamed; NULL when in place */
    int temp_unnamed;  /* the temporary file has no name yet (O_TMPFILE): temp_path is the name it will get */
    char *final_path;  /* what the rename replaces (symbolic links resolved) */
    int dir_fd;        /* final_path's directory, held from the open (O_PATH): the temporary file is
                          made, named, checked and renamed relative to it, never by path again; -1 */
    int silent;        /* set before opening: failures are not printed, only kept */
    const char *who;   /* set before opening: what starts its messages ("resmon plot"); NULL: "resmon" */
    int error;         /* the errno of the last failure */
    char reason[160];  /* ... and the sentence that says why, where strerror(error) does not ("": it does) */
    int fd;            /* the stream's descriptor (fileno() has none for it); -1 when closed */
    struct output_sink *sink; /* where the stream's failed write(2) keeps its errno */
    int is_stdout;     /* "-", or the regular file behind fd 1 by any name: the stream writes fd 1, never closed */
    int is_stderr;     /* the regular file behind fd 2 by any name: the stream writes fd 2, never closed */
    int replaces;      /* a regular file was there when opened: replaced is it (its owner and mode are kept) */
    struct stat replaced;
    struct stat made;  /* the temporary file as resmon made it (owner and mode set): what the publish puts at
                          the name, the same inode */
    int has_own;       /* output_file_open_in was told the file its previous write put there: own */
    struct stat own;
    int given_up;      /* output_file_publish_early failed and said so: the writers' descriptor now leads to the
                          null device, the temporary file is gone, and output_file_publish fails without a word */
} output_file;
/* Occupies closed descriptors 0, 1 and 2 with /dev/null, so no file resmon
 * opens later takes their place.  Call before opening anything: an output
 * named "-" is then refused by output_file_open where stdout was closed. */
void standard_fds_occupy(void);
/* Whether stdout was closed when resmon started (standard_fds_occupy holds
 * its place with /dev/null): what is meant for it cannot be written. */
int stdout_closed_when_started(void);
/* Opens path for writing, close-on-exec, leaving an existing file untouched
 * (see output_file.c).  Returns 0, or prints one line and returns -1. */
int output_file_open(output_file *f, const char *path, const char *what);
/* Replaces path (a symbolic link, cap bytes) by what the link points to,
 * relative to the link's directory when relative: one hop.  0 or -errno
 * (readlink's: EINVAL when path is no link). */
int path_follow_link(char *path, size_t cap);

/* Keeps what an open output file (a regular one, or a new one) will replace
 * for later writes (output_file_open_in): its directory, a descriptor of
 * its own (O_PATH), the resolved path, and the file there when it was
 * opened (*replaces 0: none).  0, or -errno (-EINVAL: written in place, or
 * stdout). */
int output_file_hold_place(output_file *f, int *dir_fd, char **final_path, int *replaces, struct stat *replaced);
/* Opens for another write the place held (output_file_hold_place): the
 * same directory and the same entry in it, never the path resolved again --
 * a directory on the path swapped for a link, or a link put at the entry,
 * by another user who can write there, sends nothing elsewhere: such an
 * entry is refused, not followed.  The new file takes the owner and mode of
 * replaced (the file there at the first open; NULL: none, a new file's),
 * not of whatever is there now: a 0666 file another user made at the name
 * since would have made root's file theirs for the rest of the run (stop
 * 55's attack).  own is the file the previous write put there (its made,
 * after a publish that succeeded; NULL: none): found there with the mode
 * resmon gave it, it is not refused as read-only, whatever the umask took
 * from that mode (umask 0222 makes a new file 0444, and the second write
 * refused resmon's own file).  path and what are for messages.
 * Returns 0, or prints one line (unless silent) and returns -1. */
int output_file_open_in(output_file *f, int dir_fd, const char *final_path, const struct stat *replaced,
                        const struct stat *own, const char *path, const char *what);
/* Gives a temporary file its final name now (the samples file, once the
 * command runs).  Returns 0, or prints one line and returns -1: the output
 * is then given up (given_up), its writers may go on writing (into the null
 * device), and output_file_publish returns -1 without a second line. */
int output_file_publish_early(output_file *f);
/* A FIFO, pipe or device (anything but a regular file) is written without
 * blocking: where its reader has no room, the writes wait through wait
 * (reader_wait.h, which stays the caller's; the end's, shared by every
 * output) and give up with it -- the rest is counted, and the publish names
 * what was not written.  Without one, the file has a wait of its own, which
 * no signal ends.  Call after opening. */
void output_file_wait_with(output_file *f, reader_wait *wait);
/* Flushes, closes and renames into place.  Returns 0, or prints one line
 * naming the error, removes the temporary file and returns -1 (without a
 * line where the early publication failed and said so). */
int output_file_publish(output_file *f);
/* Closes and removes resmon's temporary file; the path given is untouched. */
void output_file_discard(output_file *f);
/* Closes stdout (help, version): 0, or EXIT_USAGE after one line, from
 * who ("resmon plot"), that names the failed write's errno. */
int stdout_close(const char *who);

#endif
