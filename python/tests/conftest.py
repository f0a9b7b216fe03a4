import signal
import os
import sys

# A test run started as a background job (a non-interactive shell's `&`) has
# SIGINT and SIGQUIT ignored, and an ignored signal stays ignored across exec:
# the commands these tests start get the default dispositions back.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGQUIT, signal.SIG_DFL)

# The helpers next to the tests (helpers.py) import as top-level modules.
sys.path.insert(0, os.path.dirname(__file__))
