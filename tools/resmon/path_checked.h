/*
 * path_checked.h -- where a path leads, resolved by resmon one component at
 * a time with each directory held open, and the kernel's protected_symlinks
 * rule applied to every link whatever the sysctl says (path_checked.c).
 */
#ifndef RESMON_PATH_CHECKED_H
#define RESMON_PATH_CHECKED_H

#include <limits.h>
#include <sys/stat.h>

typedef struct path_place {
    int dir_fd;              /* the directory holding the entry, open (O_PATH) and held: -1 when none */
    char name[NAME_MAX + 1]; /* the entry in it: never a symbolic link (followed), or a name not there yet;
                                "." when the path is a directory */
    char path[PATH_MAX];     /* the resolved path (directory and name), for names and messages */
    int exists;              /* the entry is there: st is what it was when reached */
    int proc_link;           /* the entry is a /proc link to something without a path (a pipe, a socket,
                                an anonymous file): st is that; open it through dir_fd, following */
    int refused_link;        /* the walk failed with EACCES on a link the rule refuses */
    struct stat st;
} path_place;

/* Resolves path as the kernel would, without ever looking a name up from
 * the start again: every directory reached is held (openat O_PATH|
 * O_NOFOLLOW from the one before), every link is read and checked by the
 * protected_symlinks rule (in a sticky directory others can write, such as
 * /tmp, a link is followed only when it is this user's or the directory
 * owner's) and followed by resmon.  A dangling link is followed to the name
 * that does not exist yet.  On success place->dir_fd is held (release it).
 * 0 or -errno: EACCES with place->refused_link for a refused link, ELOOP
 * over 40 links, ENOENT for a missing directory, ENOTDIR, EAGAIN where a
 * /proc link's target changed while it was followed. */
int path_place_checked(const char *path, path_place *place);
/* Lets the directory go (dir_fd); safe to call twice. */
void path_place_release(path_place *place);

#endif
