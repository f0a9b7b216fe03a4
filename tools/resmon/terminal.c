/*
 * terminal.c -- lending the controlling terminal to the command's process
 * group, and job control (Ctrl-Z, fg) across the two groups.
 *
 * The command runs in a process group of its own, so that a forwarded
 * signal reaches all of it (timeout(1) does the same).  A shell gives the
 * terminal to resmon's group only; when resmon is in the terminal's
 * foreground, it hands the terminal on to the command's group with
 * tcsetpgrp -- so Ctrl-C, Ctrl-\ and Ctrl-Z go straight to the command, and
 * the command may read the terminal -- and takes it back before it writes
 * the summary.  When the command stops (Ctrl-Z), resmon takes the terminal
 * back and stops itself, so the shell sees the job stop; on `fg` it hands
 * the terminal on again and continues the command's group.  (timeout's
 * --foreground keeps the command in resmon's group instead; then a forwarded
 * SIGTERM would miss the command's descendants.)
 */
#include "terminal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

/* tcsetpgrp from a background group raises SIGTTOU unless it is blocked. */
static int set_foreground(int fd, pid_t group)
{
    sigset_t ttou, previous;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    sigprocmask(SIG_BLOCK, &ttou, &previous);
    int rc;
    while ((rc = tcsetpgrp(fd, group)) != 0 && errno == EINTR)
        ;
    sigprocmask(SIG_SETMASK, &previous, NULL);
    return rc;
}

void terminal_lend(terminal_lease *t, pid_t command_group)
{
    t->fd = -1;
    t->command_group = 0;
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return; /* no controlling terminal: nothing to lend */
    if (tcgetpgrp(fd) != getpgrp() || set_foreground(fd, command_group) != 0) {
        close(fd); /* started in the background: the terminal is not ours to lend */
        return;
    }
    t->fd = fd;
    t->command_group = command_group;
}

int terminal_lent(const terminal_lease *t)
{
    return t->fd >= 0;
}

void terminal_take_back(terminal_lease *t)
{
    if (t->fd < 0)
        return;
    set_foreground(t->fd, getpgrp());
    close(t->fd);
    t->fd = -1;
}

void terminal_command_stopped(terminal_lease *t)
{
    if (t->fd < 0)
        return;
    set_foreground(t->fd, getpgrp());
    raise(SIGSTOP); /* the shell sees the job stop; continues here on fg/bg */
    if (tcgetpgrp(t->fd) == getpgrp())
        set_foreground(t->fd, t->command_group); /* fg: the command has it again */
    kill(-t->command_group, SIGCONT);
}
