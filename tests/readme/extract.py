#!/usr/bin/env python3
"""Writes the README's code block of one language, verbatim, to a file.

The block is the first fenced block of that language right after a line
"<!-- tests/readme compiles and runs this block ... -->" (or "runs this
block ..."), so the example a reader copies is the one the test suite builds
and runs.  With NAME, the marker must also say "(NAME)"; without it, the
marker must not name one.
Usage: extract.py README.md LANGUAGE OUTPUT [NAME]   (LANGUAGE: c, cpp, sh, yaml)
"""
import re
import sys

readme, language, output = sys.argv[1:4]
name = sys.argv[4] if len(sys.argv) > 4 else None
with open(readme, encoding="utf-8") as f:
    text = f.read()
# A name is one word in parentheses; "(as C++11)" is prose, not a name.
marker = r"[^\n]*\(" + re.escape(name) + r"\)[^\n]*" if name else r"(?:(?!\(\w+\))[^\n])*"
pattern = (r"^<!-- tests/readme (?:compiles and )?runs this block" + marker + r"-->\n```" + re.escape(language)
           + r"\n(.*?)^```$")
match = re.search(pattern, text, re.S | re.M)
if not match:
    sys.exit(f"extract.py: {readme} has no marked ```{language} block" + (f" ({name})" if name else ""))
with open(output, "w", encoding="utf-8") as f:
    f.write(match.group(1))
