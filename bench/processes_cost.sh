#!/bin/sh
# Issue 34: resmon's own CPU (its threads, not its children's) on a loop of N
# /bin/true, with and without taskstats (CAP_NET_ADMIN dropped by setpriv),
# measured by an outer resmon's taskstats record of the inner resmon process.
# Run as root from an empty directory: bench/processes_cost.sh build/resmon [N]
set -e
R=$(realpath "$1"); N=${2:-10000}
LOOP="i=0; while [ \$i -lt $N ]; do /bin/true; i=\$((i+1)); done"
$R -q -o with.json -- $R -q -o /dev/null -- sh -c "$LOOP"
$R -q -o without.json -- setpriv --inh-caps=-net_admin --bounding-set=-net_admin $R -q -o /dev/null -- sh -c "$LOOP"
python3 - <<'PY'
# the inner resmon's own record; the tree's CPU and wall from the outer summary
import json
def own(f):
    d = json.load(open(f))
    n = {x["comm"]: x for x in d["processes"]["by_name"]}
    return n["resmon"]["cpu_sec"], d["cpu_sec"], d["wall_sec"]
w, wo = own("with.json"), own("without.json")
print(f"with taskstats:    resmon own CPU {w[0]:.3f} s, tree CPU {w[1]:.2f} s, wall {w[2]:.1f} s, {100*w[0]/w[1]:.2f} % of tree")
print(f"without taskstats: resmon own CPU {wo[0]:.3f} s, tree CPU {wo[1]:.2f} s, wall {wo[2]:.1f} s, {100*wo[0]/wo[1]:.2f} % of tree")
print(f"ratio with/without: {w[0]/wo[0]:.2f}")
PY
