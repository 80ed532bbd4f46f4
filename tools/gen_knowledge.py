#!/usr/bin/python3
"""Generate npu-doctor's knowledge base (data/knowledge/) from ../shared/data/npu-ops{,-release}.

Usage (from the repository root):
    /usr/bin/python3 tools/gen_knowledge.py [NPU_OPS_DIR] [--out DIR] [--check]

NPU_OPS_DIR defaults to ../shared/data/npu-ops (relative to the repository root).
--check regenerates into a temporary directory and exits 1 if data/knowledge differs.

Standard library only. How torch dispatches each op per torch release (dispatch.tsv) is the
work of tools/gen_dispatch_facts.py.
The output is deterministic: the same input gives byte-identical files. The format of
each file is described in docs/knowledge.md and in each file's header comment.
"""

import argparse
import filecmp
import hashlib
import os
import re
import shutil
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_INPUT = os.path.join(REPO, "..", "shared", "data", "npu-ops")
DEFAULT_OUT = os.path.join(REPO, "data", "knowledge")
VERSION_FILE = re.compile(r"^(\d+)\.(\d+)\.(\d+)\.txt$")

# Ops the project's curated facts (shared/design/NPU-FACTS.md) name as planned for
# deprecation. Ops also present in op-plugin's deprecated.yaml keep that source; the
# others are added with source "npu-facts" and no replacement (none is documented).
NPU_FACTS_PLANNED_DEPRECATION = [
    "npu_confusion_transpose",
    "npu_bmmV2",
    "npu_dropout_with_add_softmax",
    "npu_silu",
    "npu_mish",
]


class GenError(Exception):
    pass


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def read_lines(path):
    """Non-empty, non-comment lines with the line ending removed (tabs kept)."""
    with open(path, encoding="utf-8") as f:
        out = []
        for line in f:
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            out.append(line)
        return out


def ranges(present, versions):
    """Compact a set of versions into 'A-B,C' over the ordered version list."""
    parts, i = [], 0
    while i < len(versions):
        if versions[i] not in present:
            i += 1
            continue
        j = i
        while j + 1 < len(versions) and versions[j + 1] in present:
            j += 1
        parts.append(versions[i] if i == j else f"{versions[i]}-{versions[j]}")
        i = j + 1
    return ",".join(parts)


def expand(a, b, versions):
    if a not in versions or b not in versions:
        raise GenError(f"version range {a}-{b}: unknown version (known: {' '.join(versions)})")
    return versions[versions.index(a): versions.index(b) + 1]


def id_ranges(ids):
    """Compact a set of list ids (1-based) into '1-4,7'."""
    ids = sorted(ids)
    parts, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(parts)


LISTS_NOTE = ("lists: ids of the distinct op lists (column `list` of wheels.tsv), comma-separated, "
              "A-B = every id from A to B")


def read_table(path, min_fields):
    rows = []
    for line in read_lines(path):
        f = [c.strip() for c in line.split("\t")]
        if len(f) < min_fields:
            raise GenError(f"{path}: expected {min_fields} tab-separated fields: {line!r}")
        rows.append(f)
    return rows


def read_op_list(folder, name):
    """One op list (the files <name>.txt, .custom.txt, .impl.tsv, .tocpu.txt, .unsupported.txt)."""
    def opt(suffix):
        path = os.path.join(folder, name + suffix)
        return [l.strip() for l in read_lines(path)] if os.path.exists(path) else []
    impl = []
    for line in opt(".impl.tsv"):
        op, _, src = line.partition("\t")
        if not src:
            raise GenError(f"{os.path.join(folder, name)}.impl.tsv: line without a tab: {line!r}")
        impl.append((op.strip(), src.strip()))
    lst = {"aten": sorted(set(opt(".txt"))), "custom": sorted(set(opt(".custom.txt"))), "impl": sorted(set(impl)),
           "tocpu": sorted(set(opt(".tocpu.txt"))), "unsupported": sorted(set(opt(".unsupported.txt")))}
    if not lst["aten"]:
        raise GenError(f"{os.path.join(folder, name)}.txt: missing or empty op list")
    files = [name + s for s in (".txt", ".custom.txt", ".impl.tsv", ".tocpu.txt", ".unsupported.txt")
             if os.path.exists(os.path.join(folder, name + s))]
    return lst, files


def clean_cann(text):
    """'8.5.0*' / '9.0.0 (by suffix)' -> '8.5.0': both mark a line mapped by its suffix (release SOURCE.md)."""
    return text.split(" ")[0].rstrip("*") if text and text != "-" else ""


def release_entries(rel):
    """Wheels of ../shared/data/npu-ops-release: one per release tag (named by the wheel version the tag
    built), one per release-branch tip whose version no tag has (kind branch-tip), and the ad-hoc
    source builds. Branch names become aliases of the entry carrying their tip's version."""
    entries, inputs = [], ["SOURCE.md", "releases.tsv", os.path.join("tags", "tags.tsv")]
    by_version = {}
    for f in read_table(os.path.join(rel, "tags", "tags.tsv"), 8):
        tag, commit, date, opp, opp_date, _layout, wheel, cann = f[:8]
        lst, files = read_op_list(os.path.join(rel, "tags"), tag)
        inputs += [os.path.join("tags", n) for n in files]
        if wheel in by_version:
            raise GenError(f"tags.tsv: wheel version {wheel} built by two tags")
        e = {"name": wheel, "torch": base_line(wheel), "kind": "release", "ref": tag, "commit": commit,
             "opp": opp, "opp_date": opp_date, "cann": clean_cann(cann), "date": date, "aliases": [], "list": lst}
        by_version[wheel] = e
        entries.append(e)
    for f in read_table(os.path.join(rel, "releases.tsv"), 10):
        branch, commit, date, opp, opp_date, _layout, wheel, _src, _pkg, cann = f[:10]
        if wheel in by_version:  # the tag list wins (release SOURCE.md: prefer the tag of the wheel)
            by_version[wheel]["aliases"].append(branch)
            continue
        lst, files = read_op_list(rel, branch)
        inputs += files
        e = {"name": wheel, "torch": base_line(wheel), "kind": "branch-tip", "ref": branch, "commit": commit,
             "opp": opp, "opp_date": opp_date, "cann": clean_cann(cann), "date": date, "aliases": [branch],
             "list": lst}
        by_version[wheel] = e
        entries.append(e)
    text = open(os.path.join(rel, "SOURCE.md"), encoding="utf-8").read()
    adhoc = os.path.join(rel, "adhoc")
    for name in sorted(n[:-4] for n in os.listdir(adhoc) if n.endswith(".txt") and n.count(".") == 3):
        line, short = name.split("@")
        m = re.search(r"`adhoc/" + re.escape(name) + r"\.\*` = PTA commit `([0-9a-f]{40})` \(branch `([^`]+)`,\s*"
                      r"(\d{4}-\d{2}-\d{2}), OPP `([0-9a-f]+)`, version.txt `([^`]+)`", text)
        if not m:
            raise GenError(f"SOURCE.md does not describe adhoc/{name}")
        commit, branch, date, opp, version = m.groups()
        lst, files = read_op_list(adhoc, name)
        inputs += [os.path.join("adhoc", n) for n in files]
        entries.append({"name": f"{version}+git{short[:7]}", "torch": line, "kind": "source-build",
                        "ref": f"{branch}@{short}", "commit": commit[:12], "opp": opp[:12], "opp_date": "",
                        "cann": "", "date": date, "aliases": [], "list": lst})
    return entries, inputs


def dev_entries(dev):
    rows, heads, _ = source_table(dev)
    versions = sorted((f[:-4] for f in os.listdir(dev) if VERSION_FILE.match(f)), key=vkey)
    if not versions:
        raise GenError(f"{dev}: no <version>.txt op lists")
    missing = [v for v in versions if v not in rows]
    if missing:
        raise GenError(f"{dev}/SOURCE.md table lacks rows for {missing}")
    entries, inputs = [], ["SOURCE.md"]
    for v in versions:
        ref, commit, opp = rows[v]
        if ref == "master" and not commit:  # SOURCE.md names the master commit once, above the table
            commit = heads["torch_npu"][:12]
        lst, files = read_op_list(dev, v)
        inputs += files
        entries.append({"name": f"{v}-dev", "torch": v, "kind": "dev-tip", "ref": ref, "commit": commit,
                        "opp": opp, "opp_date": "", "cann": "", "date": "", "aliases": [], "list": lst})
    return entries, inputs


def base_line(version):
    m = re.match(r"^(\d+\.\d+\.\d+)", version)
    if not m:
        raise GenError(f"not a torch_npu version: {version!r}")
    return m.group(1)


def order_entries(dev, rel):
    """Per torch line (oldest first): its releases by date, then its dev tip. Ids go to the
    distinct lists in that order, so each op's `lists` column stays a few ranges."""
    lines = sorted({e["torch"] for e in dev + rel}, key=vkey)
    ordered = []
    for line in lines:
        ordered += sorted((e for e in rel if e["torch"] == line), key=lambda e: pep440_key(e["name"]))
        ordered += [e for e in dev if e["torch"] == line]
    lists, ids = [], {}
    for e in ordered:
        key = repr(sorted(e["list"].items()))
        if key not in ids:
            ids[key] = len(lists) + 1
            lists.append(dict(e["list"], order=len(lists), ref=e["ref"]))
        e["list_id"] = ids[key]
    return lines, ordered, lists


def pep440_key(v):
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)(?:\.?rc(\d+))?(?:\.post(\d+))?", v)
    a, b, c, rc, post = m.groups()
    return (int(a), int(b), int(c), -1000 + int(rc) if rc else 0, int(post or 0))


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def digest(folder, names):
    lines = "".join(f"{sha256(os.path.join(folder, n))}  {n}\n" for n in names)
    return hashlib.sha256(lines.encode()).hexdigest()


def header(title, columns, notes=()):
    lines = [f"# {title}", "# generated by tools/gen_knowledge.py -- do not edit; see docs/knowledge.md"]
    lines += [f"# {n}" for n in notes]
    lines.append("# columns: " + "\t".join(columns))
    return "\n".join(lines) + "\n"


def write(out_dir, name, text):
    with open(os.path.join(out_dir, name), "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def source_table(src):
    """Rows of SOURCE.md's per-version table: torch, torch_npu ref, commit, op-plugin commit."""
    path = os.path.join(src, "SOURCE.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    rows = {}
    row_re = re.compile(r"^\|\s*(\d+\.\d+\.\d+)\s*\|(.*)$")
    for line in text.splitlines():
        m = row_re.match(line)
        if not m:
            continue
        cells = [c.strip() for c in m.group(2).split("|")]
        ref_cell, plugin_cell = cells[0], cells[1]
        ticks = re.findall(r"`([^`]+)`", ref_cell)
        ref = ticks[0] if ticks else ""
        commit = ticks[1] if len(ticks) > 1 else ""
        pm = re.match(r"`([0-9a-f]{7,40})`", plugin_cell)
        rows[m.group(1)] = (ref, commit, pm.group(1) if pm else "")
    heads = {}
    for key, pat in (("torch_npu", r"master` is `([0-9a-f]{40})`"),
                     ("op-plugin", r"`master` =\s*`([0-9a-f]{40})`")):
        m = re.search(pat, text)
        if not m:
            raise GenError(f"{path}: cannot find the {key} master commit")
        heads[key] = m.group(1)
    dates = re.findall(r"(\d{4}-\d{2}-\d{2})\)", text)
    return rows, heads, (dates[0] if dates else "")


def gen_aten(lists):
    ops = {}
    for i, lst in enumerate(lists, 1):
        for op in lst["aten"]:
            ops.setdefault(op, set()).add(i)
    body = "".join(f"{op}\t{id_ranges(ids)}\n" for op, ids in sorted(ops.items()))
    return header("aten ops with an NPU kernel declared in torch_npu/op-plugin YAML, per op list",
                  ["op(.overload)", "lists"], [LISTS_NOTE]) + body


def gen_impl(lists):
    rows = {}
    for i, lst in enumerate(lists, 1):
        for op, impl in lst["impl"]:
            rows.setdefault((op, impl), set()).add(i)
    body = "".join(f"{op}\t{impl}\t{id_ranges(ids)}\n" for (op, impl), ids in sorted(rows.items()))
    return header("implementation path of each listed aten op (from <list>.impl.tsv; 1.5.0/1.8.1 have none)",
                  ["op(.overload)", "sources", "lists"],
                  ["sources: op-plugin:<section>[acl_op|op_api|sparse_op_api|dvm, joined by +] and/or "
                   "torch_npu:<yaml section>; acl_op = legacy aclop path (may JIT-compile), op_api = aclnn kernels",
                   LISTS_NOTE]) + body


def gen_custom(lists):
    ops = {}
    schema = {}
    order = sorted(range(len(lists)), key=lambda i: lists[i]["order"])  # oldest first: newest schema wins
    for i in order:
        for line in lists[i]["custom"]:
            name = line.split("(", 1)[0].strip()
            if not name:
                raise GenError(f"{lists[i]['ref']}.custom.txt: schema without a name: {line!r}")
            ops.setdefault(name, set()).add(i + 1)
            schema[name] = line
    body = "".join(f"{op}\t{id_ranges(ids)}\t{schema[op]}\n" for op, ids in sorted(ops.items()))
    return header("custom ops in the npu namespace (torch.ops.npu.<name>, torch_npu.<name>)",
                  ["op(.overload)", "lists", "schema (as in the newest list naming the op)"], [LISTS_NOTE]) + body


def gen_list(lists, key, title):
    ops = {}
    for i, lst in enumerate(lists, 1):
        for op in lst[key]:
            ops.setdefault(op, set()).add(i)
    body = "".join(f"{op}\t{id_ranges(ids)}\n" for op, ids in sorted(ops.items()))
    return header(title, ["op(.overload)", "lists"], [LISTS_NOTE]) + body


def gen_autocast(src, lines):
    rows = {}
    files = sorted(f for f in os.listdir(src) if re.match(r"^autocast-\d+\.\d+\.\d+-\d+\.\d+\.\d+\.tsv$", f))
    if not files:
        raise GenError(f"{src}: no autocast-A-B.tsv files")
    for name in files:
        a, b = re.match(r"^autocast-(\d+\.\d+\.\d+)-(\d+\.\d+\.\d+)\.tsv$", name).groups()
        vs = expand(a, b, lines)
        for line in read_lines(os.path.join(src, name)):
            fields = line.split("\t")
            if len(fields) != 2:
                raise GenError(f"{name}: expected 2 fields: {line!r}")
            rows.setdefault((fields[0].strip(), fields[1].strip()), set()).update(vs)
    body = "".join(f"{op}\t{policy}\t{ranges(vs, lines)}\n" for (op, policy), vs in sorted(rows.items()))
    return header("AutocastPrivateUse1 cast policy per aten op (torch_npu AutoCastOps.cpp), per torch line",
                  ["op(.overload)", "policy", "lines"],
                  ["policy: lower_precision_fp | fp32 | fp32_set_opt_dtype | fp32_append_dtype | promote | banned",
                   "ranges follow the input file names (autocast-2.1.0-2.12.0.tsv ...): branches in between were "
                   "not all checked one by one (see shared SOURCE.md)"]) + body


def gen_deprecated(src):
    rows = {}
    for line in read_lines(os.path.join(src, "deprecated.opplugin-master.tsv")):
        op, _, repl = line.partition("\t")
        rows[op.strip()] = (repl.strip(), "op-plugin:deprecated.yaml")
    for op in NPU_FACTS_PLANNED_DEPRECATION:
        rows.setdefault(op, ("", "npu-facts"))
    body = "".join(f"{op}\t{r}\t{s}\n" for op, (r, s) in sorted(rows.items()))
    return header("custom npu ops that are deprecated or planned for deprecation: never suggest them",
                  ["op(.overload)", "replacement (empty = none documented)", "source"],
                  ["source: op-plugin:deprecated.yaml (op-plugin master) | npu-facts (project's curated NPU-FACTS.md)"]) + body


def gen_wheels(entries):
    body = "".join("\t".join([e["name"], e["torch"], e["kind"], e["ref"], e["commit"], e["opp"], e["opp_date"],
                              e["cann"], str(e["list_id"]), ",".join(e["aliases"])]) + "\n" for e in entries)
    return header("torch_npu wheels and development-branch tips known to the knowledge base, per torch line oldest "
                  "first, each with the op list it was built with",
                  ["name", "torch", "kind", "ref", "torch_npu_commit", "op_plugin_commit", "op_plugin_date", "cann",
                   "list", "aliases"],
                  ["name: the wheel version (torch_npu.__version__ without +git...), or <line>-dev for a development tip",
                   "kind: release (built at a release tag) | branch-tip (version at a release-branch tip no tag has) | "
                   "source-build (a reported source build) | dev-tip (development branch, no released wheel)",
                   "cann: the CANN release line of the ref (release SOURCE.md; patch lines mapped to their .0 line); "
                   "empty where the data states none",
                   "list: id of the op list the other files' `lists` columns refer to (equal lists share an id)",
                   "aliases: release branches whose tip carries this version"]) + body


def gen_provenance(dev, rel, dev_inputs, rel_inputs, entries, lists):
    _, heads, date = source_table(dev)
    kinds = {k: sum(1 for e in entries if e["kind"] == k) for k in ("release", "branch-tip", "source-build", "dev-tip")}
    lines = [
        "npu-doctor knowledge base -- provenance",
        "",
        "Generated by tools/gen_knowledge.py from ../shared/data/npu-ops-release (release tags and",
        "release-branch tips of torch_npu: the lists real wheels were built from) and ../shared/data/npu-ops",
        "(development-branch tips, named <line>-dev). See the SOURCE.md of each.",
        "",
        f"{kinds['release']} release wheels (tags), {kinds['branch-tip']} untagged release-branch tips, "
        f"{kinds['source-build']} source build(s), {kinds['dev-tip']} development tips; {len(lists)} distinct op lists.",
        f"Mirror snapshot{(' of ' + date) if date else ''}: torch_npu (Ascend/pytorch) master {heads['torch_npu']},",
        f"op-plugin (Ascend/op-plugin) master {heads['op-plugin']}. Per-wheel refs and commits: wheels.tsv.",
        "",
        "Caveats: an aten op absent from a list may still run on the NPU when PyTorch decomposes it",
        "(dispatch.tsv, per torch minor release: tools/gen_dispatch_facts.py); ops registered by hand in C++ outside the",
        "YAML are not listed; a listed kernel may still compute on the host or the AI CPU (dtype-",
        "dependent); daily/dev wheels (2.1.0.post20231207) and versions set between two tags are",
        "covered by neither kind of list.",
        "",
        "input files: sha256 over the lines '<sha256>  <path>' of every file read, in path order",
        f"  npu-ops-release: {len(rel_inputs)} files, {digest(rel, rel_inputs)}",
        f"  npu-ops:         {len(dev_inputs)} files, {digest(dev, dev_inputs)}",
    ]
    return "\n".join(lines) + "\n"


def generate(dev, rel, out_dir, check=False):
    for d in (dev, rel):
        if not os.path.isdir(d):
            raise GenError(f"input directory not found: {d}")
    dev_list, dev_inputs = dev_entries(dev)
    rel_list, rel_inputs = release_entries(rel)
    lines, entries, lists = order_entries(dev_list, rel_list)
    dev_inputs += sorted(f for f in os.listdir(dev) if f.startswith("autocast-") or f.startswith("deprecated."))
    os.makedirs(out_dir, exist_ok=True)
    files = {
        "wheels.tsv": gen_wheels(entries),
        "aten-ops.tsv": gen_aten(lists),
        "aten-impl.tsv": gen_impl(lists),
        "custom-ops.tsv": gen_custom(lists),
        "tocpu.tsv": gen_list(lists, "tocpu",
                              "1.11/2.0: ops whose NPU wrapper copies inputs to CPU and runs the CPU kernel"),
        "unsupported.tsv": gen_list(lists, "unsupported",
                                    "1.11/2.0: ops registered with a kernel that raises '<op> is unsupported!'"),
        "autocast.tsv": gen_autocast(dev, lines),
        "deprecated.tsv": gen_deprecated(dev),
    }
    files["PROVENANCE"] = gen_provenance(dev, rel, sorted(set(dev_inputs)), sorted(set(rel_inputs)), entries, lists)
    for name, text in files.items():
        write(out_dir, name, text)
    return sorted(files)


# Files in the output directory that another generator writes (tools/gen_dispatch_facts.py):
# neither stale nor out of date for this one.
OTHER_GENERATORS = {"dispatch.tsv"}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", nargs="?", default=DEFAULT_INPUT, help="the npu-ops data directory (development tips)")
    ap.add_argument("--release", default=None,
                    help="the npu-ops-release data directory (default: npu-ops-release beside INPUT)")
    ap.add_argument("--out", default=DEFAULT_OUT, help="output directory (default data/knowledge)")
    ap.add_argument("--check", action="store_true", help="fail if the output directory is not up to date")
    args = ap.parse_args(argv)
    release = args.release or os.path.join(os.path.dirname(os.path.abspath(args.input)), "npu-ops-release")
    try:
        if not args.check:
            names = generate(args.input, release, args.out)
            for stale in sorted(set(os.listdir(args.out)) - set(names) - OTHER_GENERATORS):
                os.remove(os.path.join(args.out, stale))  # files an older generator wrote (compat.tsv)
            print(f"gen_knowledge: wrote {len(names)} files to {os.path.relpath(args.out, os.getcwd())}")
            return 0
        with tempfile.TemporaryDirectory() as tmp:
            names = generate(args.input, release, tmp, check=True)
            stale = [n for n in names if not os.path.exists(os.path.join(args.out, n))
                     or not filecmp.cmp(os.path.join(tmp, n), os.path.join(args.out, n), shallow=False)]
            extra = sorted(set(os.listdir(args.out)) - set(names) - OTHER_GENERATORS) if os.path.isdir(args.out) else []
            if stale or extra:
                print("gen_knowledge --check: data/knowledge is out of date: " + " ".join(stale + extra)
                      + "\n  regenerate with: /usr/bin/python3 tools/gen_knowledge.py", file=sys.stderr)
                return 1
            print(f"gen_knowledge --check: {len(names)} files up to date")
            return 0
    except (GenError, OSError) as e:
        print(f"gen_knowledge: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
