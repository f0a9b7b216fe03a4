/*
 * exec_failure.h -- why an exec failed, in one line (exec_failure.c).
 */
#ifndef RESMON_EXEC_FAILURE_H
#define RESMON_EXEC_FAILURE_H


/* Prints one line saying why execvp(file) failed with exec_errno ("bad
 * interpreter" when a "#!" line names a missing file) and returns the exit
 * status: EXIT_NOT_FOUND or EXIT_CANNOT_EXECUTE. */
int exec_failure_report(const char *file, int exec_errno);

#endif
