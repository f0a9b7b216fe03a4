/*
 * textfile.h -- --textfile PATH: the exposition as a file for
 * node_exporter's textfile collector (textfile.c, on output_file.c).
 */
#ifndef RESMON_TEXTFILE_H
#define RESMON_TEXTFILE_H

#include <stddef.h>
#include <sys/stat.h>

typedef struct textfile {
    const char *path;  /* as given, for messages */
    int dir_fd;        /* the directory of what it resolved to, held from the start (O_PATH); -1 */
    char *final_path;  /* what it resolved to: the entry every write replaces */
    int replaces;      /* a file was there at the start: each write keeps its owner and mode (replaced) */
    struct stat replaced;
    int wrote;         /* a write was published: written is the file it put at the entry */
    struct stat written;
} textfile;

/* Before the command starts: 0, or -errno with a sentence in err when the
 * path is not a regular file (or a new one) that can be replaced. */
int textfile_open(textfile *t, const char *path, char *err, size_t errcap);
/* Replaces the file with text atomically (a temporary file in the same
 * directory renamed over it, see textfile.c), so node_exporter never reads
 * half a file.  0, or -errno with the sentence that says why in reason. */
int textfile_write(textfile *t, const char *text, size_t len, char *reason, size_t reason_cap);
void textfile_close(textfile *t);

#endif
