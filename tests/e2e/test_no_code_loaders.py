"""No code-executing loader anywhere (docs/security.md): scans the sources of src/, fuzz/,
python/ and tools/ and fails when one uses pickle, torch.load, np.load(allow_pickle=True),
marshal, eval or exec (and their kin: dill, shelve, jsonpickle, joblib, yaml.load).

Python files are read token by token (comments and strings never count, and `model.eval()`
is torch's Module.eval, not the builtin); C++ files with comments and string literals
removed (error messages may say "pickle"); shell scripts line by line, comments removed.
A legitimate use goes in ALLOWED with the reason."""

import io
import os
import re
import tokenize
import unittest

SOURCE = os.environ.get("NPUD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
ROOTS = ("src", "fuzz", "python", "tools")

# (path relative to the repo, the flagged text) -> why it is fine. Keep it short.
ALLOWED = {}

# Modules whose import alone means a pickle/marshal-style loader is in play.
BANNED_MODULES = {"pickle", "cPickle", "_pickle", "pickletools", "marshal", "dill", "shelve", "jsonpickle",
                  "cloudpickle", "joblib", "copyreg"}
BANNED_BUILTINS = {"eval", "exec", "__import__"}
# Calls `a.b(` that load code or pickles: torch.load, numpy's load with pickles, yaml's unsafe load.
BANNED_CALLS = {("torch", "load"), ("yaml", "load"), ("yaml", "unsafe_load"), ("pickle", "load"),
                ("pickle", "loads"), ("marshal", "loads"), ("marshal", "load"), ("jit", "load")}

CPP_PATTERNS = [re.compile(p) for p in (r"\bpickle", r"torch::load\b", r"torch::jit::load\b", r"\bPyRun_",
                                         r"\bPy_CompileString", r"\bPyMarshal_", r"\bPyEval_")]
SHELL_PATTERNS = [re.compile(p) for p in (r"\bpickle\b", r"torch\.load\b", r"allow_pickle\s*=\s*True", r"\bmarshal\b",
                                           r"^\s*eval\b", r"[;&|]\s*eval\b")]


def python_findings(text):
    """(line, what) for each banned use in Python source, from its tokens."""
    out = []
    toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)]
    for i, t in enumerate(toks):
        prev = toks[i - 1] if i > 0 else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        after_dot = prev is not None and prev.string == "."
        if t.type == tokenize.NAME:
            if t.string in BANNED_MODULES and prev is not None and prev.string in ("import", "from", ","):
                out.append((t.start[0], "import " + t.string))
            elif t.string in BANNED_MODULES and not after_dot and nxt is not None and nxt.string == ".":
                out.append((t.start[0], t.string + "."))
            elif t.string in BANNED_BUILTINS and not after_dot and nxt is not None and nxt.string == "(":
                out.append((t.start[0], t.string + "("))
            elif (after_dot and i >= 2 and (toks[i - 2].string, t.string) in BANNED_CALLS and nxt is not None
                  and nxt.string == "("):
                out.append((t.start[0], "%s.%s(" % (toks[i - 2].string, t.string)))
            elif (t.string == "allow_pickle" and nxt is not None and nxt.string == "=" and i + 2 < len(toks)
                  and toks[i + 2].string != "False"):
                out.append((t.start[0], "allow_pickle=" + toks[i + 2].string))
    return out


_CPP_STRIP = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                        re.S)


def cpp_findings(text):
    # Comments and literals become blanks of the same line count, so line numbers stay right.
    code = _CPP_STRIP.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out = []
    for n, line in enumerate(code.split("\n"), 1):
        for p in CPP_PATTERNS:
            if p.search(line):
                out.append((n, p.pattern))
    return out


def shell_findings(text):
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        line = re.sub(r"(^|\s)#.*$", "", line)
        for p in SHELL_PATTERNS:
            if p.search(line):
                out.append((n, p.pattern))
    return out


def scan_tree(root):
    """[(relative path, line, what)] over ROOTS under root."""
    found = []
    for top in ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if d not in ("__pycache__", ".git")]
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if name.endswith(".py"):
                    kind = python_findings
                elif name.endswith((".cpp", ".hpp", ".h", ".cc", ".c")):
                    kind = cpp_findings
                elif name.endswith(".sh") or (name == "run" and top == "tools"):
                    kind = shell_findings
                else:
                    with open(path, "rb") as f:
                        head = f.read(64)
                    if head.startswith(b"#!") and b"python" in head.split(b"\n")[0]:
                        kind = python_findings
                    elif head.startswith(b"#!") and b"sh" in head.split(b"\n")[0]:
                        kind = shell_findings
                    else:
                        continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for line, what in kind(text):
                    found.append((rel, line, what))
    return found


class NoCodeLoaders(unittest.TestCase):
    def test_sources_have_no_code_executing_loader(self):
        found = [(rel, line, what) for rel, line, what in scan_tree(os.path.abspath(SOURCE))
                 if (rel, what) not in ALLOWED]
        self.assertEqual(found, [], "code-executing loaders (see docs/security.md; allowlist: ALLOWED in %s): %s"
                         % (os.path.basename(__file__), found))

    def test_the_scan_finds_what_it_must(self):
        # The checker itself: each banned form is found, the harmless look-alikes are not.
        bad = "\n".join(["import pickle", "from marshal import loads", "import os, dill", "x = torch.load(p)",
                         "np.load(p, allow_pickle=True)", "eval(s)", "exec(code)", "y = yaml.load(f)",
                         "z = pickle.loads(b)"])
        self.assertEqual(sorted({line for line, _ in python_findings(bad)}), list(range(1, 10)), python_findings(bad))
        fine = "\n".join(["model.eval()", "# import pickle", "s = 'torch.load(p)'", "np.save(f, a, allow_pickle=False)",
                          "np.load(p, allow_pickle=False)", "def evaluate(): pass", "self.exec_count = 1"])
        self.assertEqual(python_findings(fine), [])
        self.assertEqual(len(cpp_findings("auto t = pickle_load(x);\nPyRun_SimpleString(s);")), 2)
        self.assertEqual(cpp_findings('// never unpickle\nfail("a .pt file is a pickle");\nauto r = R"(pickle)";'), [])
        self.assertEqual(len(shell_findings("python3 -c 'import pickle'\neval \"$cmd\"")), 2)
        self.assertEqual(shell_findings("# no pickle here\necho evaluate"), [])


if __name__ == "__main__":
    unittest.main()
