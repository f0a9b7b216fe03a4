import os
import sys

# The helpers next to the tests (helpers.py) import as top-level modules.
sys.path.insert(0, os.path.dirname(__file__))
