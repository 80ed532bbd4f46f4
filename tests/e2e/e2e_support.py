"""Shared by the e2e suites: the Python that runs test programs, whether it has a module, its
torch version, and where a test program marks its planted problem.

ctest runs every suite twice (tests/CMakeLists.txt): with Debian's torch 1.13
(/usr/bin/python3, the build tree's binary) and with torch 2.13 in the venv tools/test.sh
makes (its python, and the npu-doctor the wheel installed there). The suite itself runs under
the Python that runs its programs, so in-process imports see the same torch."""

import os
import subprocess
import sys

PYTHON = os.environ.get("NPUD_TEST_PYTHON") or sys.executable
# ../shared (the fixtures and the SARIF schema), beside the source tree unless ctest names it.
SHARED = os.environ.get("NPUD_SHARED_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                                            "shared")


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


def torch_version():
    """(major, minor) of the torch PYTHON imports, or None without torch."""
    try:
        r = subprocess.run([PYTHON, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True,
                           timeout=120)
    except Exception:
        return None
    if r.returncode != 0:
        return None
    parts = r.stdout.strip().split("+")[0].split(".")
    return int(parts[0]), int(parts[1])


SARIF_SCHEMA = os.path.join(SHARED, "data", "sarif", "sarif-schema-2.1.0.json")


def sarif_schema_errors(log):
    """The official SARIF 2.1.0 schema's complaints about a parsed SARIF log (empty: valid),
    formats included (helpUri must be a URI). None when the schema (../shared/data/sarif) or the
    `jsonschema` package is missing (tools/test.sh installs it in the torch 2.13 venv; Debian's
    Python has it)."""
    try:
        import json
        import jsonschema
    except ImportError:
        return None
    if not os.path.isfile(SARIF_SCHEMA):
        return None
    with open(SARIF_SCHEMA) as f:
        schema = json.load(f)
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    return ["/".join(map(str, e.absolute_path)) + ": " + e.message for e in validator.iter_errors(log)]


def assert_valid_sarif(test, log):
    """Fails `test` when the SARIF log breaks the official schema; skips it, saying why, when
    the schema or the validator is missing."""
    errors = sarif_schema_errors(log)
    if errors is None:
        test.skipTest("SARIF not validated: no %s or no jsonschema package" % SARIF_SCHEMA)
    test.assertEqual(errors, [])
