# Accuracy of resmon compare on pytest reports of 500 tests: noise vs change (BENCHMARKS.md, issue 28 at stops 57-58).
# Writes sb/ and sn/ in the current directory; RESMON names the binary (default build-gcc/resmon).
import json, os, random, subprocess, shutil
def make(seed, runs, changes, sigma):
    random.seed(seed)
    for side in ("sb", "sn"):
        shutil.rmtree(side, ignore_errors=True); os.makedirs(side)
        for r in range(runs):
            tests = {}
            for t in range(500):
                f, s = 1.0, sigma
                for change in changes:  # (upto, factor) or (upto, factor, the changed tests' own sigma)
                    if t < change[0]:
                        f = change[1] if side == "sn" else 1.0
                        s = change[2] if len(change) > 2 else sigma
                        break
                tests[f"t.py::test_{t}"] = {"cpu_sec": 0.5 * f * random.lognormvariate(0, s), "outcome": "passed"}
            json.dump({"resmon_version": "0.4.0", "exit_status": 0, "interrupted": False, "tests": tests}, open(f"{side}/r{r}.json", "w"))
def fails():
    return subprocess.run([os.environ.get("RESMON", "build-gcc/resmon"), "compare", "--max-increase", "cpu_sec=10%", "sb", "sn"], capture_output=True).returncode == 1
for name, runs, changes, sigma in (("noise s0.1, 5 runs", 5, [], 0.1), ("noise s0.3, 5 runs", 5, [], 0.3),
        ("all 500 +30%, 5 runs", 5, [(500, 1.3)], 0.1), ("50 of 500 +30%, 5 runs", 5, [(50, 1.3)], 0.1),
        ("5 of 500 +30%, 10 runs", 10, [(5, 1.3)], 0.1), ("150 of 500 halved, s0.3, 5 runs", 5, [(150, 0.5)], 0.3),
        ("300 of 500 halved, s0.3, 5 runs", 5, [(300, 0.5)], 0.3),
        ("250 of 500 +5% (s0.02), the rest s0.15, 5 runs", 5, [(250, 1.05, 0.02)], 0.15)):
    n = sum(fails() for seed in range(20) if make(seed, runs, changes, sigma) is None)
    print(f"{name}: failed {n}/20", flush=True)
