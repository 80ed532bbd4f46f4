"""Shared by the e2e suites: the Python that runs test programs, whether it has a module, its
torch version, and where a test program marks its planted problem.

ctest runs every suite twice (tests/CMakeLists.txt): with Debian's torch 1.13
(/usr/bin/python3, the build tree's binary) and with torch 2.13 in the venv tools/test.sh
makes (its python, and the npu-doctor the wheel installed there). The suite itself runs under
the Python that runs its programs, so in-process imports see the same torch."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

PYTHON = os.environ.get("NPUD_TEST_PYTHON") or sys.executable
# The project's checkout (examples/, tools/).
SOURCE_DIR = os.environ.get("NPUD_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# ../shared (the fixtures and the SARIF schema), beside the source tree unless ctest names it.
SHARED = os.environ.get("NPUD_SHARED_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                                            "shared")


def _shared_inputs_required():
    """Beside a checkout with ../shared, as in CI (tools/test.sh sets NPUD_REQUIRE_SHARED=1), a
    test skipped for a missing fixture fails instead: a renamed or removed fixture must not turn
    its tests into silent skips. Skips for other reasons (no torch, not root) stay skips."""
    if os.environ.get("NPUD_REQUIRE_SHARED") != "1":
        return
    import unittest

    def about_shared(reason):
        return re.search(r"fixture|\.\./shared|NPUD_SHARED_DIR", str(reason), re.I) is not None

    def failing(reason):
        def decorator(test_item):
            def fail(*args, **kwargs):
                raise AssertionError("required test input missing (NPUD_REQUIRE_SHARED=1): %s" % reason)
            if isinstance(test_item, type):   # a skipped class: every test in it fails
                for name in dir(test_item):
                    if name.startswith("test"):
                        setattr(test_item, name, fail)
                return test_item
            return fail
        return decorator

    plain_skip_unless, plain_skip_if, plain_skip_test = unittest.skipUnless, unittest.skipIf, unittest.TestCase.skipTest
    unittest.skipUnless = lambda cond, reason: (plain_skip_unless(cond, reason) if cond or not about_shared(reason)
                                                else failing(reason))
    unittest.skipIf = lambda cond, reason: (plain_skip_if(cond, reason) if not cond or not about_shared(reason)
                                            else failing(reason))

    def skip_test(self, reason):
        if about_shared(reason):
            raise AssertionError("required test input missing (NPUD_REQUIRE_SHARED=1): %s" % reason)
        plain_skip_test(self, reason)
    unittest.TestCase.skipTest = skip_test


_shared_inputs_required()


class Folder:
    """A temporary folder that tests write files into (parents made as needed)."""

    def __init__(self, prefix="npud-test-"):
        self.path = tempfile.mkdtemp(prefix=prefix)

    def write(self, name, text):
        path = os.path.join(self.path, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def close(self):
        shutil.rmtree(self.path, ignore_errors=True)


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
    formats included (a URI must be one). None when the schema (../shared/data/sarif) or the
    `jsonschema` package is missing (tools/test.sh installs it in the torch 2.13 venv; Debian's
    Python has it)."""
    try:
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
    """Fails `test` when GitHub code scanning would refuse the SARIF log (assert_github_accepts)
    or when it breaks the official schema; skips the schema check, saying why, when the schema or
    the validator is missing (so call it last)."""
    assert_github_accepts(test, log)
    errors = sarif_schema_errors(log)
    if errors is None:
        test.skipTest("SARIF not validated: no %s or no jsonschema package" % SARIF_SCHEMA)
    test.assertEqual(errors, [])


# GitHub's hard limits on one upload (docs.github.com, "SARIF results exceed hard limit"):
# above them the whole file is rejected. sarif-sdk's GH1004 names the same arrays.
GITHUB_LIMITS = {"runs": 20, "rules": 25000, "results": 25000, "locations": 1000}


def _is_relative_reference(uri):
    """A relative URI reference with no scheme and no leading '/': resolved against %SRCROOT%."""
    return bool(uri) and not uri.startswith("/") and re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", uri) is None


def _artifact_errors(where, artifact, base_ids):
    uri = (artifact or {}).get("uri")
    if not uri:
        return ["%s: no artifactLocation.uri (GH1001: \"expected artifact location\")" % where]
    errors = []
    if not _is_relative_reference(uri):
        errors.append("%s: %r is not a relative URI (GH1005/GH1006)" % (where, uri))
    if artifact.get("uriBaseId") not in base_ids:
        errors.append("%s: uriBaseId %r is not in originalUriBaseIds" % (where, artifact.get("uriBaseId")))
    return errors


def _location_errors(where, loc, base_ids):
    phys = loc.get("physicalLocation")
    if not phys:
        return ["%s: no physicalLocation (GH1001)" % where]
    errors = _artifact_errors(where, phys.get("artifactLocation"), base_ids)
    if (phys.get("region") or {}).get("startLine", 0) < 1:
        errors.append("%s: no region.startLine (GH1003)" % where)
    return errors


def _result_errors(where, res, rule_ids, base_ids):
    errors = []
    if not (res.get("message") or {}).get("text"):
        errors.append("%s: empty message.text (GH1007)" % where)
    if res.get("ruleId") not in rule_ids:
        errors.append("%s: ruleId %r is not among the run's rules" % (where, res.get("ruleId")))
    if not res.get("partialFingerprints"):
        errors.append("%s: no partialFingerprints" % where)
    locations = res.get("locations") or []
    if not locations:
        errors.append("%s: no locations (GH1001: \"expected at least one location\")" % where)
    if len(locations) > GITHUB_LIMITS["locations"]:
        errors.append("%s: %d locations (GH1004)" % (where, len(locations)))
    for k, loc in enumerate(locations):
        errors += _location_errors("%s/locations/%d" % (where, k), loc, base_ids)
    for k, fix in enumerate(res.get("fixes") or []):
        for m, change in enumerate(fix.get("artifactChanges") or []):
            errors += _artifact_errors("%s/fixes/%d/artifactChanges/%d" % (where, k, m), change.get("artifactLocation"),
                                       base_ids)
    for flow in res.get("codeFlows") or []:
        for thread in flow.get("threadFlows") or []:
            if any("index" in step for step in thread.get("locations") or []):
                errors.append("%s: a threadFlowLocation refers by index (GH1002)" % where)
    return errors


def _run_errors(where, run):
    errors = []
    rules = ((run.get("tool") or {}).get("driver") or {}).get("rules") or []
    results = run.get("results")
    if results is None:
        return ["%s: no results array" % where]
    for key, n in (("rules", len(rules)), ("results", len(results))):
        if n > GITHUB_LIMITS[key]:
            errors.append("%s: %d %s (GH1004: GitHub takes %d)" % (where, n, key, GITHUB_LIMITS[key]))
    bases = run.get("originalUriBaseIds") or {}
    for name, base in bases.items():
        uri = (base or {}).get("uri", "")
        if not (uri.startswith("file:///") and uri.endswith("/")):
            errors.append("%s/originalUriBaseIds/%s: %r is not an absolute file:// folder URI ending in /" % (where, name, uri))
    rule_ids = {r.get("id") for r in rules}
    for j, res in enumerate(results):
        errors += _result_errors("%s/results/%d" % (where, j), res, rule_ids, set(bases))
    return errors


def github_ingestion_errors(log):
    """What GitHub code scanning would refuse in a parsed SARIF log (empty: nothing), as
    microsoft/sarif-sdk's GitHub rules GH1001-GH1007 state its ingestion rules: every result with
    a location whose physicalLocation.artifactLocation.uri is a relative reference (no scheme, no
    leading '/') with its uriBaseId defined, a region.startLine, a message text, a ruleId of the
    run's rules, partialFingerprints; inline thread flows; GitHub's size limits; and no file://
    anywhere in the log but the originalUriBaseIds that say where the project root is."""
    runs = log.get("runs") or []
    errors = [] if 1 <= len(runs) <= GITHUB_LIMITS["runs"] else ["runs: %d (GitHub takes 1 to 20)" % len(runs)]
    for i, run in enumerate(runs):
        errors += _run_errors("runs/%d" % i, run)
    without_bases = dict(log, runs=[{k: v for k, v in run.items() if k != "originalUriBaseIds"} for run in runs])
    if "file://" in json.dumps(without_bases):
        errors.append("a file:// URI outside originalUriBaseIds")
    return errors


def assert_github_accepts(test, log):
    """Fails `test` when GitHub code scanning would refuse the SARIF log (github_ingestion_errors)."""
    test.assertEqual(github_ingestion_errors(log), [])


GITHUB_COMMAND = re.compile(r"^::(error|warning|notice) file=([^,:]+),line=(\d+)(,col=\d+)?(,endLine=\d+)?(,endColumn=\d+)?"
                            r",title=([A-Z]+[0-9]+)::(.+)$")


def github_annotations(test, text):
    """The `--format github` lines of `text` as (level, file, line, rule, message), failing `test`
    on a line that is not a workflow command of that shape or names an absolute file."""
    out = []
    for line in text.splitlines():
        m = GITHUB_COMMAND.match(line)
        test.assertIsNotNone(m, line)
        test.assertTrue(_is_relative_reference(m.group(2)), line)
        out.append((m.group(1), m.group(2), int(m.group(3)), m.group(7), m.group(8)))
    return out


# The shared libraries a release binary may need (glibc's and libgcc_s: every manylinux policy
# has them), as tools/deps.sh lists them for its own check of the binary.
MANYLINUX_LIBRARIES = set(subprocess.run(
    ["bash", "-c", '. "$0/tools/deps.sh" && echo $NPUD_MANYLINUX_LIBRARIES',
     SOURCE_DIR],
    capture_output=True, text=True, check=True).stdout.split())


def needed_libraries(binary):
    """The NEEDED entries of an ELF binary of any architecture (readelf reads the headers)."""
    out = subprocess.run(["readelf", "-d", "-W", binary], capture_output=True, text=True, check=True, timeout=60).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out))
