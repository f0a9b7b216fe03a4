#!/usr/bin/env python3
"""header_style.py -- include/resmon.h stays scannable: one line per field.

Inside a struct or enum body every comment fits on one line: a member's
comment ends on the member's line, and a comment of its own between members
is a one-line group heading.  What a field means at length (its contract)
belongs in the header's prose before the struct or next to the function
whose behaviour it is, as zstd.h does.  A line that holds a comment stays
within 100 columns, any other within 120.

    header_style.py [--report] [HEADER]

--report prints the longest comment inside a body (lines) and passes.
"""
import re
import sys

MAX_COLUMNS = 120
MAX_COMMENT_COLUMNS = 100


def comments_in_bodies(text):
    """(first line, line count, body name) of every comment inside a
    struct/enum body."""
    found = []
    lines = text.split("\n")
    depth, name, in_comment, start = 0, None, False, 0
    for number, line in enumerate(lines, 1):
        i = 0
        while i < len(line):
            if in_comment:
                end = line.find("*/", i)
                if end < 0:
                    break
                in_comment = False
                if depth:
                    found.append((start, number - start + 1, name))
                i = end + 2
                continue
            if line.startswith("/*", i):
                in_comment, start = True, number
                i += 2
                continue
            if line.startswith("//", i):
                break
            if line[i] == "{":
                if depth == 0:
                    match = re.search(r"\b(struct|enum)\s+(\w+)\s*$", line[:i])
                    if not match:  # a function body or an initializer
                        i += 1
                        continue
                    name = match.group(2)
                depth += 1
            elif line[i] == "}" and depth:
                depth -= 1
            i += 1
    return found


def main(argv):
    report = "--report" in argv
    paths = [a for a in argv[1:] if a != "--report"]
    path = paths[0] if paths else "include/resmon.h"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = comments_in_bodies(text)
    if report:
        longest = max(found, key=lambda c: c[1], default=(0, 0, "-"))
        print(f"{path}: {len(found)} comments in bodies; longest {longest[1]} lines "
              f"(line {longest[0]}, {longest[2]}); {sum(1 for c in found if c[1] > 1)} span lines")
        return 0
    problems = [f"{path}:{line}: a comment of {count} lines inside {name}'s body: keep one line per "
                f"field and move the contract to the prose before the struct"
                for line, count, name in found if count > 1]
    for number, line in enumerate(text.split("\n"), 1):
        commented = "/*" in line or "*/" in line or line.lstrip().startswith("*")
        limit = MAX_COMMENT_COLUMNS if commented else MAX_COLUMNS
        if len(line) > limit:
            problems.append(f"{path}:{number}: {len(line)} columns (at most {limit})")
    if not any(c for c in found):
        problems.append(f"{path}: no struct body found: is this resmon.h?")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
