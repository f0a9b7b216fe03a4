/*
 * plot_command.h -- resmon plot (plot_command.c).
 */
#ifndef RESMON_PLOT_COMMAND_H
#define RESMON_PLOT_COMMAND_H


/* argv[0] is "plot".  Returns the exit status. */
int plot_main(int argc, char **argv);

#endif
