#!/usr/bin/env python3
"""Keeps doc/resmon.1 in step with `resmon --help` and `resmon compare --help`.

Every option --help names must be in the man page's OPTIONS section and every
option documented there must be in --help, with the same short form; `-h`
prints exactly what `--help` prints; the same for each subcommand (`resmon
plot --help` and the PLOT OPTIONS section, `resmon compare --help` and
COMPARE OPTIONS); and groff formats the page
without a warning.  Usage: check_options.py RESMON_BINARY MAN_PAGE
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def help_options(text):
    """{long name: short letter or None} for every --option the help names."""
    options = {name: None for name in re.findall(r"(?<![\w-])--([a-z][a-z-]*)", text)}
    for short, name in re.findall(r"(?<![\w-])-([a-zA-Z]), --([a-z][a-z-]*)", text):
        options[name] = short
    return options


def man_options(roff, name="OPTIONS"):
    """{long name: short letter or None} from the tags (.TP lines) of a section."""
    section = re.search(r"^\.SH " + name + r"\n(.*?)^\.SH ", roff, re.S | re.M)
    if not section:
        sys.exit(f"man page: no {name} section")
    lines = section.group(1).splitlines()
    tags = [lines[i + 1].replace("\\-", "-") for i, line in enumerate(lines[:-1]) if line == ".TP"]
    options = {}
    for tag in tags:
        longs = re.findall(r"(?<![\w-])--([a-z][a-z-]*)", tag)
        short = re.search(r"(?<![\w-])-([a-zA-Z])\b", tag)
        for name in longs:
            options[name] = short.group(1) if short else None
    return options


# Subcommands: (the words before --help, the man page section of their options).
COMMANDS = [((), "OPTIONS"), (("plot",), "PLOT OPTIONS"), (("compare",), "COMPARE OPTIONS")]


def check_command(binary, words, section, roff, problems):
    name = " ".join(("resmon",) + words)
    long_help = subprocess.run([binary, *words, "--help"], capture_output=True, text=True, check=True).stdout
    short_help = subprocess.run([binary, *words, "-h"], capture_output=True, text=True)
    if short_help.returncode != 0 or short_help.stdout != long_help:
        problems.append(f"'{name} -h' (status {short_help.returncode}) does not print what --help prints")
    in_help = help_options(long_help)
    in_man = man_options(roff, section)
    for option in sorted(in_help.keys() - in_man.keys()):
        problems.append(f"{name}: --{option} is in --help but not in the man page's {section}")
    for option in sorted(in_man.keys() - in_help.keys()):
        problems.append(f"{name}: --{option} is in the man page's {section} but not in --help")
    for option in sorted(in_help.keys() & in_man.keys()):
        if in_help[option] != in_man[option]:
            problems.append(f"{name} --{option}: short form -{in_help[option]} in --help, "
                            f"-{in_man[option]} in the man page")
    return len(in_help)


def section_text(text, start, next_heading):
    """The text from the line `start` to the next heading (a line starting with next_heading)."""
    at = text.find("\n" + start + "\n")
    if at < 0:
        return ""
    end = text.find("\n" + next_heading, at + len(start) + 2)
    return text[at:end if end >= 0 else len(text)]


def output_keys(binary, root):
    """Every summary key and samples column resmon writes: those of a real run
    (with a phase, every metric group) and those the sources write only in
    some runs (GPU, cgroup v2, --pid, --memory-limit, several GPUs)."""
    keys = set()
    with tempfile.TemporaryDirectory() as tmp:
        summary, samples = os.path.join(tmp, "s.json"), os.path.join(tmp, "s.csv")
        subprocess.run([binary, "-q", "-i", "0.01", "-o", summary, "-s", samples, "--", "sh", "-c",
                        '"$0" mark a; "$0" mark b', binary], check=True, timeout=60)
        with open(summary, encoding="utf-8") as f:
            data = json.load(f)
        keys |= set(data) | {k for phase in data.get("phases", []) for k in phase} - {"name", "start_sec"}
        with open(samples, encoding="utf-8") as f:
            keys |= set(f.readline().strip().split(","))
    patterns = {
        "src/summary_json.c": [r'put_\w+\(&w, "(\w+)"', r'\{"(cgroup_\w+)", s->'],
        "tools/resmon/summary_output.c": [r'put_number\(out, "(\w+)"', r'\\"(\w+)\\": '],
        "tools/resmon/phases_output.c": [r'put_number\(out, "(\w+)"', r'\\"(\w+)\\": '],
        "tools/resmon/samples_file.c": [r'put_value\(f, "(\w+)"', r'\{"(\w+)", offsetof', r'gpu%zu_(\w+)'],
    }
    for path, regexes in patterns.items():
        with open(os.path.join(root, path), encoding="utf-8") as f:
            source = f.read()
        for regex in regexes:
            found = set(re.findall(regex, source))
            keys |= {"gpuN_" + k for k in found} if regex.startswith("gpu") else found
    return keys


def check_glossary(binary, roff, readme, root, problems):
    """Issue 29, 5: the README's and the man page's glossary name every key
    and column resmon writes (its unit, source and exactness beside it)."""
    keys = output_keys(binary, root)
    sections = {"README.md (## Glossary)": section_text(readme, "## Glossary", "## "),
                "the man page (GLOSSARY)": section_text(roff, ".SH GLOSSARY", ".SH ").replace("\\-", "-")}
    for where, text in sections.items():
        if not text:
            problems.append(f"{where}: no glossary")
            continue
        for key in sorted(keys):
            if not re.search(r"(?<![\w])" + re.escape(key) + r"(?![\w])", text):
                problems.append(f"{where}: the glossary lacks {key}")
    return len(keys)


def check_metric_groups(binary, roff, problems):
    """Issue 32, 3: --help lists the metric groups from the library's list;
    the man page's --metrics entry must name each one (its text may be its
    own)."""
    text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    paragraph = re.search(r"--metrics GROUPS(.*?)\n {6}-", text, re.S)
    if not paragraph:
        problems.append("--help has no --metrics paragraph")
        return 0
    groups = re.findall(r"(?:separated:|,)\s+([a-z][a-z-]*) \(", paragraph.group(1))
    entry = re.search(r"^\.BI \\-\\-metrics .*?^\.TP", roff, re.S | re.M)
    if not groups or not entry:
        problems.append("no metric groups found in --help or the man page's --metrics entry")
        return 0
    named = set(re.findall(r"^\.BR? ([a-z][a-z-]*)", entry.group(0).replace("\\-", "-"), re.M))
    for group in groups:
        if group not in named:
            problems.append(f"the man page's --metrics entry does not name the group {group}")
    return len(groups)


def main():
    binary, man_page = sys.argv[1], sys.argv[2]
    problems = []
    with open(man_page, encoding="utf-8") as f:
        roff = f.read()
    counts = [check_command(binary, words, section, roff, problems) for words, section in COMMANDS]
    root = os.path.dirname(os.path.dirname(os.path.abspath(man_page)))
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    glossary = check_glossary(binary, roff, readme, root, problems)
    groups = check_metric_groups(binary, roff, problems)

    if shutil.which("groff"):
        lint = subprocess.run(["groff", "-man", "-ww", "-z", man_page], capture_output=True, text=True)
        if lint.returncode != 0 or lint.stderr:
            problems.append("groff warns about the man page:\n" + lint.stderr)

    for problem in problems:
        print("manpage:", problem, file=sys.stderr)
    if problems:
        return 1
    print(f"manpage: {' + '.join(map(str, counts))} options, the same in --help and {man_page}; "
          f"{glossary} keys and columns in both glossaries; {groups} metric groups")
    return 0


if __name__ == "__main__":
    sys.exit(main())
