#!/bin/sh
# Runs PROGRAM under valgrind's TOOL (helgrind or drd) with resmon's
# suppressions; any other report fails.  Usage: run.sh TOOL PROGRAM
set -eu
tool=$1
program=$2
# --fair-sched=yes: valgrind runs one thread at a time, and with its default
# lock handover the test's reader thread, which takes the monitor's lock in a
# tight loop, can starve the sampler for minutes (a timeout, not a race).
exec valgrind --tool="$tool" -q --error-exitcode=1 --fair-sched=yes \
    --suppressions="$(dirname "$0")/resmon.supp" "$program"
