#!/bin/sh
# Instructions per reading of each metric group (bench/metric_cost.c), by
# callgrind: the count of 1200 readings minus that of 200, over 1000, so the
# set-up cancels.  Reproducible to the instruction on one build, unlike
# timings on a shared machine -- but user space only: the kernel's work for
# each /proc read (all of smaps_rollup's page-table walk) is not counted;
# resmon_metric_cost's timings have it.
#   bench/metric_cost_callgrind.sh [path/to/resmon_metric_cost]
set -eu
bin=${1:-build/resmon_metric_cost}
few=200
many=1200
instructions() { # group, readings
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" --loop "$1" "$2" 2>&1 |
        sed -n 's/^==[0-9]*== Collected : *\([0-9]*\)$/\1/p'
}
printf '| group | instructions per reading |\n|---|---:|\n'
for group in none io memory pss counts cpu_split faults network all; do
    a=$(instructions "$group" "$few")
    b=$(instructions "$group" "$many")
    printf '| %s | %d |\n' "$group" $(((b - a) / (many - few)))
done
