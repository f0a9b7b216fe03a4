/*
 * terminal.h -- the controlling terminal lent to the command (terminal.c).
 */
#ifndef RESMON_TERMINAL_H
#define RESMON_TERMINAL_H

#include <sys/types.h>

/* The controlling terminal lent to the command's process group while resmon
 * holds the foreground (see terminal.c). */
typedef struct terminal_lease {
    int fd;               /* /dev/tty while lent, else -1 */
    pid_t command_group;
} terminal_lease;
void terminal_lend(terminal_lease *t, pid_t command_group);
int terminal_lent(const terminal_lease *t);
/* The command stopped (Ctrl-Z): take the terminal back, stop resmon, and on
 * continue give it back and continue the command's group. */
void terminal_command_stopped(terminal_lease *t);
void terminal_take_back(terminal_lease *t);

#endif
