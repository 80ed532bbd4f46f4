"""The texts the shim says, by command and case (data/texts/shim.tsv, carried here as
_advice_texts.py): the Python twin of src/knowledge/advice_texts.hpp, same format and rules.

    rec.note_once("threads", advice("capture", "other_threads", count=2, plural="s", names="a, b"))

A row's condition ("torch>=2.1") is tested against `versions` ({"torch": "2.1.0"}); the first
row whose condition holds is used, else the key's unconditional row. The shim never raises for
a text: a key or value that is missing leaves the text as it is (the unit test AdviceTexts.*
checks every call against the file)."""

import re

from . import _advice_texts

_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\"}
_rows = None


def _unescape(s):
    return re.sub(r"\\([nt\\])", lambda m: _ESCAPES[m.group(1)], s)


def _load():
    rows = {}
    for line in _advice_texts.TSV.split("\n"):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.rstrip("\r").split("\t")
        if len(fields) == 4:
            rows.setdefault((fields[0], fields[1]), []).append((fields[2], _unescape(fields[3])))
    return rows


def _version_parts(v):
    out = []
    for part in v.split("."):
        m = re.match(r"\d+", part)
        if not m:
            break
        out.append(int(m.group(0)))
        if m.end() != len(part):
            break
    return out


def _in_range(version, spec):
    for c in spec.split(","):
        c = c.strip()
        op = re.match(r"[<>=]*", c).group(0)
        a, b = _version_parts(version), _version_parts(c[len(op):])
        n = max(len(a), len(b))
        a, b = a + [0] * (n - len(a)), b + [0] * (n - len(b))
        if not {">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b, "==": a == b}.get(op, True):
            return False
    return True


def _met(when, versions):
    for c in when.split(";"):
        c = c.strip()
        i = next((k for k, ch in enumerate(c) if ch in "<>="), -1)
        version = (versions or {}).get(c[:i].strip()) if i > 0 else None
        if not version or not _in_range(version, c[i:]):
            return False
    return True


def advice(rule, key, versions=None, **values):
    global _rows
    if _rows is None:
        _rows = _load()
    candidates = _rows.get((rule, key))
    if not candidates:
        return "npu-doctor: %s %s" % (rule, key)
    text = next((t for w, t in candidates if w != "*" and _met(w, versions)),
                next((t for w, t in candidates if w == "*"), candidates[0][1]))
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), text)
