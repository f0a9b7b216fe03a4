#!/usr/bin/env python3
"""The README's install commands work on a developer's machine as written
(issue 29, 10):

- its Debian route builds for Debian's python3 even when the first python3 on
  PATH is another (a pyenv shim, a venv): pybuild there fails with "No module
  named build".  The dpkg-buildpackage line is run with dpkg-buildpackage
  standing in as a shell function that reports which python3 it would find,
  with a fake python3 first on PATH;
- its `cmake --install` is followed by ldconfig, without which a program
  linked with -lresmon fails to start until someone runs it.
Usage: install_steps.py README.md
"""
import os
import re
import subprocess
import sys
import tempfile


def sh_blocks(text):
    return re.findall(r"^```sh\n(.*?)^```$", text, re.S | re.M)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        readme = f.read()
    problems = []
    lines = [line for block in sh_blocks(readme) for line in block.splitlines()]

    build = [line for line in lines if "dpkg-buildpackage" in line]
    if len(build) != 1:
        problems.append(f"expected one dpkg-buildpackage line in the README's sh blocks, found {len(build)}")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "python3")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\necho 'No module named build' >&2\nexit 1\n")
            os.chmod(fake, 0o755)
            script = "dpkg-buildpackage() { command -v python3; }\n" + build[0].split("#")[0] + "\n"
            r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30,
                               env=dict(os.environ, PATH=tmp + ":" + os.environ.get("PATH", "/usr/bin:/bin")))
            found = r.stdout.strip()
            if r.returncode != 0 or found != "/usr/bin/python3":
                problems.append(f"the README's dpkg-buildpackage line finds python3 at {found!r} "
                                f"(status {r.returncode}) when another python3 is first on PATH: "
                                f"pybuild needs Debian's /usr/bin/python3")

    install = [line for line in lines if "cmake --install" in line]
    if not install:
        problems.append("no `cmake --install` in the README's sh blocks")
    for line in install:
        after = line.split("cmake --install", 1)[1]
        if not re.search(r"&&\s*(sudo\s+)?ldconfig\b", after):
            problems.append(f"the README's `{line.strip()}` does not run ldconfig after cmake --install "
                            f"(a program linked with -lresmon fails until it runs)")

    for problem in problems:
        print("install_steps:", problem, file=sys.stderr)
    if problems:
        return 1
    print("install_steps: the Debian build finds /usr/bin/python3; ldconfig follows cmake --install")
    return 0


if __name__ == "__main__":
    sys.exit(main())
