#!/usr/bin/env python3
"""Runs the README's GitHub Actions job ("In CI") on a generated repository.

The job's YAML block is extracted verbatim (extract.py) and its `run:` steps
are run in order as Actions runs them (`bash -e`), with GITHUB_BASE_REF and
GITHUB_STEP_SUMMARY set and this build's resmon first on PATH -- all but the
checkout (`uses:`) and the install step, which need the network.  The
repository is a CMake project whose benchmark touches a number of MiB and
burns 0.5 s of CPU: its base commit on origin/main, the change on a branch.
A change that doubles the memory must fail the job with the markdown table in
the job summary; a change that keeps it must pass.

Environment: RESMON (the command).  Usage: ci_job.py README.md
Exits 77 (CTest: skipped) without git or cmake, which the job needs (a
package build's chroot may have neither).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

README = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
RESMON = os.environ["RESMON"]
EXTRACT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "extract.py")

BENCHMARK = """\
#include <stdlib.h>
#include <time.h>

int main(void)
{
    size_t size = (size_t)MIB << 20;
    volatile char *block = malloc(size); /* volatile: a Release build may not drop the pages */
    if (!block)
        return 1;
    for (size_t i = 0; i < size; i += 4096)
        block[i] = 1;
    /* 0.5 s of CPU, however busy the machine: clock() counts the page
     * faults too, which on a loaded machine cost up to 4 ms a MiB (80 MiB
     * took 0.33 s of CPU beside five builds), so the floor, not the
     * faults, sets the figure on both sides of the comparison. */
    while (clock() < CLOCKS_PER_SEC / 2)
        ;
    free((void *)block);
    return 0;
}
"""


def steps(job):
    """[(name, script)] of the job's steps that have a `run:`, in order."""
    found = []
    lines = job.splitlines()
    name = None
    for i, line in enumerate(lines):
        step = re.match(r"^\s*- (?:name: (.*)|uses: )", line)
        if step:
            name = step.group(1)
        run = re.match(r"^(\s*)run: (.*)$", line)
        if not run:
            continue
        if run.group(2) != "|":
            found.append((name, run.group(2)))
            continue
        indent = None
        body = []
        for more in lines[i + 1:]:
            if more.strip() and indent is None:
                indent = len(more) - len(more.lstrip())
            if more.strip() and len(more) - len(more.lstrip()) < indent:
                break
            body.append(more[indent:] if more.strip() else "")
        found.append((name, "\n".join(body) + "\n"))
    return found


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True)


class ReadmeCiJob(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.NamedTemporaryFile("r", suffix=".yml") as f:
            subprocess.run([sys.executable, EXTRACT, README, "yaml", f.name, "ci"], check=True)
            cls.job = f.read()
        cls.steps = steps(cls.job)

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.bin = os.path.join(self.dir.name, "bin")
        os.mkdir(self.bin)
        os.symlink(os.path.abspath(RESMON), os.path.join(self.bin, "resmon"))
        self.repo = os.path.join(self.dir.name, "repo")
        os.mkdir(self.repo)
        git(self.repo, "init", "-q", "-b", "main")
        git(self.repo, "config", "user.email", "ci@example.invalid")
        git(self.repo, "config", "user.name", "CI")
        self.commit("CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\nproject(bench C)\n"
                    "add_executable(benchmark benchmark.c)\n")
        self.commit("benchmark.c", "#define MIB 20\n" + BENCHMARK)
        git(self.repo, "update-ref", "refs/remotes/origin/main", "HEAD")  # what checkout's fetch-depth: 0 gives
        git(self.repo, "checkout", "-q", "-b", "change")

    def tearDown(self):
        self.dir.cleanup()

    def commit(self, name, text):
        with open(os.path.join(self.repo, name), "w") as f:
            f.write(text)
        git(self.repo, "add", name)
        git(self.repo, "commit", "-q", "-m", name)

    def run_job(self):
        """Runs the job's run steps; returns {step name: exit status} up to the first failure, and the summary."""
        summary = os.path.join(self.dir.name, "summary.md")
        env = dict(os.environ, PATH=self.bin + os.pathsep + os.environ["PATH"], GITHUB_BASE_REF="main",
                   GITHUB_STEP_SUMMARY=summary, ASAN_OPTIONS="detect_leaks=0")
        statuses = {}
        for name, script in self.steps:
            if name and name.startswith("Install"):
                continue
            r = subprocess.run(["bash", "-e", "-c", script], cwd=self.repo, env=env, capture_output=True,
                               text=True, timeout=600)
            statuses[name] = (r.returncode, r.stderr)
            if r.returncode != 0:
                break
        with open(summary) as f:
            return statuses, f.read()

    def test_the_job_has_its_steps(self):
        names = [name for name, _ in self.steps]
        self.assertEqual(names, ["Install resmon", "Benchmark the base and the change, five runs each", "Compare"])

    def test_a_change_that_doubles_the_peak_fails_the_job_with_the_table_in_the_summary(self):
        self.commit("benchmark.c", "#define MIB 40\n" + BENCHMARK)
        statuses, summary = self.run_job()
        benchmark, compare = statuses.values()
        self.assertEqual(benchmark[0], 0, benchmark[1])
        self.assertEqual(compare[0], 1, compare[1])
        self.assertRegex(compare[1], r"^resmon compare: exact_peak_rss_mb rose from [0-9.]+ to [0-9.]+ "
                                     r"\(\+[0-9.]+%\), above the limit of \+10%\n$")
        lines = summary.splitlines()
        self.assertEqual("**resmon compare**: base runs-base.json (5 runs) vs new runs-change.json (5 runs): "
                         "\u2717 **1 of 2 limits exceeded**", lines[0])
        row = next(line for line in lines if line.startswith("| exact\\_peak\\_rss\\_mb |"))
        # five runs a side, every new one above every base one raised by the
        # limit (the gate is one-sided, a rise beyond it): p = 1/252
        # exactly, or about 0.01 by the normal approximation when runs tie
        # (KiB-grained peaks: 0.0097-0.012 seen, printed with two digits)
        match = re.search(r" \| (0\.\d+) \| regression \| \*\*EXCEEDED limit \+10%\*\* \|$", row)
        self.assertIsNotNone(match, row)
        self.assertLess(float(match.group(1)), 0.05, row)
        # cpu_sec's limit holds: whatever the rank test says of its change
        self.assertRegex(summary, r"\n\| cpu\\_sec \| .* \| (unchanged|noise|improvement) \| ok, limit \+20%(, under its floor of \+0\.01)? \|\n")

    def test_a_change_that_keeps_the_figures_passes(self):
        self.commit("benchmark.c", "#define MIB 20\n/* a comment only */\n" + BENCHMARK)
        statuses, summary = self.run_job()
        for side in ("base", "change"):  # the benchmark step's --repeat 5 --warmup 1, one file a side
            with open(os.path.join(self.repo, f"runs-{side}.json")) as f:
                runs = json.load(f)
            self.assertEqual((runs["resmon_repeat"], runs["warmup"], runs["completed"], len(runs["runs"])),
                             (1, 1, 5, 5))
        self.assertEqual([status for status, _ in statuses.values()], [0, 0], statuses)
        self.assertTrue(summary.splitlines()[0].endswith("(5 runs): \u2713 2 limits hold"), summary)


if __name__ == "__main__":
    missing = [tool for tool in ("git", "cmake") if not shutil.which(tool)]
    if missing:
        print(f"ci_job.py: skipped: {' and '.join(missing)} not installed")
        sys.exit(77)
    unittest.main(argv=sys.argv[:1], verbosity=2)
