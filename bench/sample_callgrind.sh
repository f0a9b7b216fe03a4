#!/bin/sh
# The regression guard of issue 20: user-space instructions per sample, by
# callgrind, reproducible on one build where timings on a shared machine are
# not (the kernel's side of each syscall is not counted).
#   - the tight loop (resmon_bench --loop N: timestamp, probe, keep,
#     summarise; self mode, no groups): the count of 11000 samples minus
#     that of 1000, over 10000, so the set-up cancels;
#   - the sampler thread itself (resmon_bench --thread S: a default monitor
#     at 1 kHz; callgrind --separate-threads=yes): the thread's count over a
#     3 s run minus a 1 s run, over the difference in samples -- the wake-up,
#     the schedule and the publishing included.
#   bench/sample_callgrind.sh [path/to/resmon_bench]
set -eu
bin=${1:-build/resmon_bench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
collected() { sed -n 's/^==[0-9]*== Collected : *\([0-9]*\)$/\1/p' "$1"; }
loop() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" --loop "$1" >/dev/null 2>"$tmp/log"; collected "$tmp/log"; }
a=$(loop 1000)
b=$(loop 11000)
# The sampler: the thread whose file has the most take_sample calls.
thread() { # seconds -> "samples instructions"
    rm -f "$tmp"/cg.*
    n=$(valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$tmp/cg.%p" "$bin" --thread "$1" 2>/dev/null)
    best=0
    for f in "$tmp"/cg.*-*; do
        i=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f")
        if grep -q 'take_sample' "$f" && [ "$i" -gt "$best" ]; then best=$i; fi
    done
    echo "$n $best"
}
read -r n1 i1 <<EOT
$(thread 1)
EOT
read -r n3 i3 <<EOT
$(thread 3)
EOT
commit=$(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
printf '\n### Instructions per sample (callgrind, user space, commit %s)\n\n' "$commit"
printf '| what | instructions per sample |\n|---|---:|\n'
printf '| tight loop, self mode, no groups (%d - %d over 10000) | %d |\n' "$b" "$a" $(((b - a) / 10000))
printf '| sampler thread at 1 kHz, default options (%d - %d over %d - %d samples) | %d |\n' \
    "$i3" "$i1" "$n3" "$n1" $(((i3 - i1) / (n3 - n1)))
