#!/usr/bin/env python3
"""Writes a new trace rule with everything it needs, so it builds, is listed and passes at once:

    tools/new_rule.py ID NAME "one-line summary" [--severity warning] [--root DIR]
    tools/new_rule.py MEM002 pinned-alloc "host allocations of pinned memory in the steps"

It writes or edits, under the project root (or --root):
  src/rules/<id>_<name>.cpp     the rule: its RuleInfo row and a working check() to adapt (it
                                reports the steps' host ops named in kOps, one finding per op)
  src/rules/builtin_rules.hpp   the declaration `const Rule& <id>_rule();`
  src/rules/registry.cpp        its entry in trace_rules(), in id order
  data/texts/rules.tsv          its fix text row (advice("<ID>", "fix"))
  docs/rules/<ID>.md            its doc: what it finds, why it hurts on an NPU, how to fix, example
  README.md                     its id in the rule list (tests/unit/test_rule_docs.cpp checks it)
  tests/unit/test_rule_<id>.cpp a test on a hand-built trace (tests/unit/trace_builder.hpp)
Then: build (cmake --build build) and run the test (build/tests/npud_tests --gtest_filter='<ID>*').
Nothing is overwritten: an id or name already taken, or a file already there, stops it (exit 1).
"""

import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEVERITIES = {"info": "Info", "warning": "Warning", "error": "Error"}


def fail(message):
    print("new_rule.py: error: " + message, file=sys.stderr)
    sys.exit(1)


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def write(root, path, text, new=False):
    full = os.path.join(root, path)
    if new and os.path.exists(full):
        fail("%s exists already" % path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)
    print(("wrote " if new else "edited ") + path)


def c_string(text):
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def rule_source(rule_id, name, summary, severity, fn):
    cls = "".join(part.capitalize() for part in re.split(r"[-_]", name)) + "Rule"
    return """// {id} {name}: {summary}. See docs/rules/{id}.md.
// Written by tools/new_rule.py: adapt kOps and check() to what the rule finds.
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "model/trace.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"

namespace npud {{
namespace {{

// The host ops this rule reports when the steps run them.
constexpr std::array<std::string_view, 1> kOps = {{"aten::example_op"}};

class {cls} final : public Rule {{
 public:
  const RuleInfo& info() const override {{
    static constexpr RuleInfo kInfo{{{id_c}, {name_c}, {summary_c}, Severity::{severity}}};
    return kInfo;
  }}

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {{
    const Trace& t = ctx.trace;
    const TraceIndex& index = ctx.index();
    GroupMap groups;   // one finding per op name and program line
    for (uint32_t i = 0; i < t.ops.size(); ++i) {{
      const Op& op = t.ops[i];
      std::string_view name = t.str(op.name);
      if (op.step_index < 0 || std::find(kOps.begin(), kOps.end(), name) == kOps.end()) continue;
      Location at = location_of(index, i);
      EventGroup& g = groups.get(fmt::format("{{}}@{{}}", name, site_key(at)));
      if (g.count == 0) {{
        g.what = std::string(name);
        g.location = at;
      }}
      g.add(op.step_index, op.dur_ns);
    }}
    for (const EventGroup& g : groups.groups()) {{
      Finding f = timed_finding(index, id(), g);
      f.severity = info().severity;
      f.message = fmt::format("{{}} ran {{}}", g.what, times_text(index, g.count, g.in_steps, g.in_first_step));
      f.fix = advice({id_c}, "fix");
      out.push_back(std::move(f));
    }}
  }}
}};

}}  // namespace

const Rule& {fn}() {{
  static const {cls} rule;
  return rule;
}}

}}  // namespace npud
""".format(id=rule_id, name=name, summary=summary, cls=cls, fn=fn, severity=severity, id_c=c_string(rule_id),
           name_c=c_string(name), summary_c=c_string(summary))


def test_source(rule_id, fn):
    return """// {id}: tools/new_rule.py wrote this test; replace it with inputs of what the rule finds.
#include <gtest/gtest.h>

#include "rules/builtin_rules.hpp"
#include "trace_builder.hpp"

using namespace npud;
using npud::test::TraceBuilder;

TEST({id}, ReportsTheStepsOpsItNames) {{
  TraceBuilder b;
  b.step(1, 0, 1000);
  b.op("aten::example_op", 10, 5, {{.file = "train.py", .line = 7}});
  b.op("aten::example_op", 20, 5, {{.file = "train.py", .line = 7}});
  b.op("aten::add", 30, 5);
  auto f = test::run_rule({fn}(), b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "{id}");
  EXPECT_EQ(f[0].metric("count"), 2);
  EXPECT_FALSE(f[0].fix.empty());
}}

TEST({id}, QuietOnATraceWithoutThem) {{
  TraceBuilder b;
  b.step(1, 0, 1000);
  b.op("aten::add", 10, 5);
  EXPECT_TRUE(test::run_rule({fn}(), b.build()).empty());
}}
""".format(id=rule_id, fn=fn)


def doc_source(rule_id, name, summary, severity):
    return """# {id} {name}

**Default severity:** {sev}.

## What it finds
{summary}.

## Why it hurts on an Ascend NPU
(Say what the NPU does differently from a GPU here, with a fact from ../shared/design/NPU-FACTS.md.)

## How to fix
(The setting or code change the user makes; the fix text is data/texts/rules.tsv `{id}	fix`.)

## Example
```python
# (a few lines that trigger it)
```

Tests: `tests/unit/test_rule_{lower}.cpp`.
""".format(id=rule_id, name=name, summary=summary[:1].upper() + summary[1:], sev=severity.lower(),
           lower=rule_id.lower())


def add_declaration(text, fn, name):
    line = "const Rule& %s();" % fn
    if line in text:
        fail("builtin_rules.hpp already declares %s" % fn)
    at = text.rindex("\n}  // namespace npud")
    return text[:at] + "\n%s   // %s" % (line, name) + text[at:]


def add_registry_entry(text, fn):
    entries = re.findall(r"&(\w+_rule)\(\)", text)
    if fn in entries:
        fail("registry.cpp already lists %s" % fn)
    after = [e for e in entries if e > fn]
    if after:   # in id order: before the first entry after it
        return text.replace("&%s()" % after[0], "&%s(), &%s()" % (fn, after[0]), 1)
    last = entries[-1]
    return text.replace("&%s()," % last, "&%s(), &%s()," % (last, fn), 1)


def add_readme_id(text, rule_id, summary):
    """A bullet of its own in README's rule list, before the last one (PARSE001's)."""
    marker = "- a source file `scan` cannot parse"
    if ("`%s`" % rule_id) in text:
        return text
    if marker not in text:
        fail("README.md's rule list has moved: add `%s` to it by hand" % rule_id)
    return text.replace(marker, "- %s: `%s`;\n%s" % (summary, rule_id, marker), 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("id", help="the rule id: letters then three digits (MEM002)")
    parser.add_argument("name", help="a short kebab-case name (pinned-alloc)")
    parser.add_argument("summary", help="one line for `npu-doctor rules`")
    parser.add_argument("--severity", choices=sorted(SEVERITIES), default="warning")
    parser.add_argument("--root", default=HERE, help="the project root (default: this checkout)")
    a = parser.parse_args()
    if not re.fullmatch(r"[A-Z]+[0-9]{3}", a.id):
        fail("the id is letters then three digits, like MEM002: %r" % a.id)
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", a.name):
        fail("the name is kebab-case, like pinned-alloc: %r" % a.name)
    if "\t" in a.summary or "\n" in a.summary:
        fail("the summary is one line")
    root, lower, snake = a.root, a.id.lower(), a.name.replace("-", "_")
    fn = "%s_rule" % lower
    if os.path.exists(os.path.join(root, "docs", "rules", a.id + ".md")):
        fail("%s is taken (docs/rules/%s.md exists)" % (a.id, a.id))
    if re.search(r'RuleInfo kInfo\{"[A-Z0-9]+", "%s"' % re.escape(a.name), "".join(
            read(root, os.path.join("src", "rules", f)) for f in os.listdir(os.path.join(root, "src", "rules"))
            if f.endswith(".cpp"))):
        fail("the name %s is taken" % a.name)
    severity = SEVERITIES[a.severity]

    write(root, "src/rules/%s_%s.cpp" % (lower, snake), rule_source(a.id, a.name, a.summary, severity, fn), new=True)
    write(root, "tests/unit/test_rule_%s.cpp" % lower, test_source(a.id, fn), new=True)
    write(root, "docs/rules/%s.md" % a.id, doc_source(a.id, a.name, a.summary, a.severity), new=True)
    write(root, "src/rules/builtin_rules.hpp", add_declaration(read(root, "src/rules/builtin_rules.hpp"), fn, a.name))
    write(root, "src/rules/registry.cpp", add_registry_entry(read(root, "src/rules/registry.cpp"), fn))
    texts = read(root, "data/texts/rules.tsv")
    write(root, "data/texts/rules.tsv", texts.rstrip("\n") + "\n%s\tfix\t*\t(What the user changes to remove it.)\n" % a.id)
    write(root, "README.md", add_readme_id(read(root, "README.md"), a.id, a.summary))
    print("next: cmake --build build && build/tests/npud_tests --gtest_filter='%s*'" % a.id)


if __name__ == "__main__":
    main()
