#!/bin/sh
# Runs PROGRAM under valgrind's TOOL (helgrind or drd) with resmon's
# suppressions; any other report fails.  Usage: run.sh TOOL PROGRAM
set -eu
tool=$1
program=$2
exec valgrind --tool="$tool" -q --error-exitcode=1 \
    --suppressions="$(dirname "$0")/resmon.supp" "$program"
