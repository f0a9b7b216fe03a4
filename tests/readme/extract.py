#!/usr/bin/env python3
"""Writes the README's code block of one language, verbatim, to a file.

The block is the first fenced block of that language after a line
"<!-- tests/readme compiles and runs this block ... -->", so the example a
reader copies is the one the test suite builds and runs.
Usage: extract.py README.md LANGUAGE OUTPUT   (LANGUAGE: c or cpp)
"""
import re
import sys

readme, language, output = sys.argv[1:4]
with open(readme, encoding="utf-8") as f:
    text = f.read()
pattern = r"^<!-- tests/readme compiles and runs this block[^\n]*-->\n```" + re.escape(language) + r"\n(.*?)^```$"
match = re.search(pattern, text, re.S | re.M)
if not match:
    sys.exit(f"extract.py: {readme} has no marked ```{language} block")
with open(output, "w", encoding="utf-8") as f:
    f.write(match.group(1))
