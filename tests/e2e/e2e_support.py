"""Shared by the e2e suites: the Python that runs test programs (Debian's, with torch),
whether it has a module, and where a test program marks its planted problem."""

import os
import subprocess
import sys

PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def python_has(module):
    try:
        return subprocess.run([PYTHON, "-c", "import " + module], capture_output=True, timeout=120).returncode == 0
    except Exception:
        return False


def planted_line(programs_dir, program, marker="# PLANTED"):
    """The line number of the first line of programs_dir/program that contains marker."""
    with open(os.path.join(programs_dir, program)) as f:
        for number, line in enumerate(f, 1):
            if marker in line:
                return number
    raise AssertionError("no %s marker in %s" % (marker, program))
