// DYNSHAPE001 dynamic-shapes: call sites (user file:line) whose ops see input shapes that
// change from step to step. On Ascend every new input shape of an op is a new kernel
// compilation / tiling (and with graph mode a new graph), so steps with fresh shapes run
// far slower than steady ones. Needs per-op input shapes and at least two steps: captures.
// See docs/rules/DYNSHAPE001.md.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/capture_rules.hpp"
#include "rules/npu_cost.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

// Ops whose shape says nothing about compilation (metadata and views).
bool ignored(std::string_view base) {
  return base == "view" || base == "_reshape_alias" || base == "_unsafe_view" || base == "detach" ||
         base == "alias" || base == "t" || base == "transpose" || base == "permute" || base == "expand" ||
         base == "unsqueeze" || base == "squeeze" || base == "slice" || base == "select" ||
         base == "as_strided" || base == "lift_fresh" || base == "_local_scalar_dense" || base == "item";
}

std::string signature(const Trace& t, const Op& op) {
  std::string s;
  for (uint32_t r : t.inputs(op)) {
    const TensorMeta& m = t.tensors[r];
    if (!m.is_tensor || !m.has_shape) continue;
    s += '[';
    auto d = t.shape(m);
    for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    s += ']';
  }
  return s;
}

// The dimension sizes in shape signatures ("[16,12][16]" -> 16, 12, 16).
void add_sizes(std::string_view sig, std::set<int64_t>& out) {
  int64_t v = -1;
  for (char c : sig) {
    if (c >= '0' && c <= '9') {
      v = (v < 0 ? 0 : v * 10) + (c - '0');
      if (v > (int64_t(1) << 40)) v = int64_t(1) << 40;
    } else if (v >= 0) {
      out.insert(v);
      v = -1;
    }
  }
  if (v >= 0) out.insert(v);
}

struct OpAtSite {
  std::map<int32_t, std::set<std::string>> per_step;   // step -> input shape signatures
  std::set<std::string> all;
  std::unordered_map<std::string, uint32_t> first_op;  // signature -> first op that had it
};

struct ShapeSite {
  Location location;
  uint32_t first_op = kNone;                           // the first op recorded here
  std::map<std::string, OpAtSite> ops;                 // op name + module -> shapes
};

class DynamicShapes final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"DYNSHAPE001", "dynamic-shapes",
        "call sites whose input shapes change across steps (each new shape recompiles on NPU; captures)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (t.steps.size() < 2) return;   // nothing to compare
    const TraceIndex& index = ctx.index();
    std::vector<ShapeSite> sites;
    std::unordered_map<std::string, size_t> site_index;

    for (uint32_t i = 0; i < t.ops.size(); ++i) {
      const Op& op = t.ops[i];
      if (op.kind != OpKind::Aten || op.step_index < 0 || op.inputs_count == 0 || index.inside_composite(i)) continue;
      // Backward ops' shapes follow their forward op's: the forward op is the one cause.
      if (op.backward) continue;
      if (ignored(aten_base(t.str(op.name)))) continue;
      Location loc = location_of(index, i);
      if (!call_site(loc)) continue;
      loc.op.clear();
      loc.module.clear();
      auto [it, inserted] = site_index.try_emplace(site_key(loc), sites.size());
      if (inserted) {
        ShapeSite s;
        s.location = std::move(loc);
        sites.push_back(std::move(s));
      }
      ShapeSite& s = sites[it->second];
      if (s.first_op == kNone) s.first_op = i;
      if (s.location.module.empty() && op.module) s.location.module = std::string(t.str(op.module));
      std::string sig = signature(t, op);
      if (sig.empty()) continue;
      // Keyed by op and module: one line calling two layers (a Sequential) is two op
      // instances, each with its own shape history.
      OpAtSite& o = s.ops[fmt::format("{}\x1f{}", t.str(op.name), t.str(op.module))];
      o.per_step[op.step_index].insert(sig);
      o.first_op.try_emplace(sig, i);
      o.all.insert(sig);
    }

    // One root cause (a sequence length that varies, a short last batch) changes the shapes
    // of every line it reaches: sites are grouped by cause (merge_by_cause), one finding each.
    std::vector<SiteFinding> per_site;
    for (ShapeSite& s : sites) {
      // An op changes shape when the sets of shapes it sees differ between steps.
      std::set<int32_t> changed_steps;
      std::set<int64_t> varying;
      uint32_t first_new_op = kNone;   // the earliest op that saw a shape the first step did not
      std::vector<std::string> changing;
      size_t distinct = 0, steps_seen = 0, new_shapes = 0;
      std::vector<std::string> examples;
      std::string example_op;
      size_t example_distinct = 0;
      for (auto& [name, o] : s.ops) {
        if (o.per_step.size() < 2) continue;
        const auto& first = o.per_step.begin()->second;
        bool differs = false;
        for (const auto& [step, sigs] : o.per_step) {
          if (sigs == first) continue;
          differs = true;
          changed_steps.insert(step);
        }
        if (!differs) continue;
        for (const auto& sig : o.all)
          if (!first.contains(sig)) first_new_op = std::min(first_new_op, o.first_op[sig]);
        // Sizes seen in some steps and not in others: a short last batch is 16 -> 12 at every
        // line it reaches, whichever step each line's ops fall in.
        std::set<int64_t> seen_all, seen_every;
        bool first_step = true;
        for (const auto& [step, sigs] : o.per_step) {
          std::set<int64_t> sizes;
          for (const auto& sig : sigs) add_sizes(sig, sizes);
          seen_all.insert(sizes.begin(), sizes.end());
          if (first_step) seen_every = sizes;
          else std::erase_if(seen_every, [&](int64_t v) { return !sizes.contains(v); });
          first_step = false;
        }
        for (int64_t v : seen_all)
          if (!seen_every.contains(v)) varying.insert(v);
        std::string op_name = name.substr(0, name.find('\x1f'));
        if (std::find(changing.begin(), changing.end(), op_name) == changing.end()) changing.push_back(op_name);
        distinct = std::max(distinct, o.all.size());
        steps_seen = std::max(steps_seen, o.per_step.size());
        new_shapes += o.all.size() - first.size();
        if (o.all.size() > example_distinct) {   // examples from the op with the most shapes
          example_distinct = o.all.size();
          example_op = op_name;
          examples.clear();
          for (const auto& sig : o.all) {
            if (examples.size() == 3) break;
            examples.push_back(sig);
          }
        }
      }
      if (changing.empty()) continue;
      s.location.op = example_op;
      Finding f;
      f.rule = "DYNSHAPE001";
      f.severity = Severity::Warning;
      f.location = s.location;
      f.cost_ns = int64_t(double(new_shapes) * cost::kNewShapeNs);
      std::string ops;
      for (size_t i = 0; i < changing.size() && i < 4; ++i) ops += (i ? ", " : "") + changing[i];
      if (changing.size() > 4) ops += fmt::format(" and {} more", changing.size() - 4);
      std::string shapes;
      for (const auto& e : examples) shapes += (shapes.empty() ? "" : ", ") + e;
      f.message = fmt::format("input shapes change across steps at {}: {} distinct shapes in {} steps ({}), e.g. {} {}",
                              where(s.location), distinct, steps_seen, ops, example_op, shapes);
      f.metrics = {{"distinct_shapes", double(distinct)},
                   {"steps", double(steps_seen)},
                   {"ops", double(changing.size())},
                   {"new_shapes", double(new_shapes)}};
      f.notes.push_back(advice("DYNSHAPE001", "cost_note"));
      f.fix = advice("DYNSHAPE001", "fix");
      std::string pattern;
      for (int32_t step : changed_steps) pattern += std::to_string(step) + ",";
      per_site.push_back({std::move(pattern), *changed_steps.begin(), first_new_op, s.first_op, std::move(varying),
                          std::move(f)});
    }
    merge_by_cause(t, per_site, out);
  }

 private:
  struct SiteFinding {
    std::string steps;          // the steps in which the site's shapes changed
    int32_t first_change = 0;   // the first of them
    uint32_t first_new_op = kNone;
    uint32_t steady_op = kNone;   // an op of the same site before the change
    std::set<int64_t> varying;  // sizes seen in some steps only
    Finding finding;
  };

  // The first op that saw a new shape came down another call path than the same line's ops
  // before (an eval pass with a larger batch calls the model from its own line): the outermost
  // frame where the paths part is where the cause is; the line inside only where it shows.
  static void name_the_caller(const Trace& t, uint32_t changed, uint32_t steady, Finding& f) {
    if (changed == kNone || steady == kNone || t.ops[changed].stack == kNone || t.ops[steady].stack == kNone) return;
    auto now = t.frames_of(t.ops[changed].stack), before = t.frames_of(t.ops[steady].stack);
    size_t k = 0;   // frames in common, counted from the outermost
    while (k < now.size() && k < before.size()) {
      const Frame& a = t.frames[now[now.size() - 1 - k]];
      const Frame& b = t.frames[before[before.size() - 1 - k]];
      if (a.file != b.file || a.line != b.line) break;
      ++k;
    }
    if (k + 1 >= now.size()) return;   // the same path, or it parts at the line itself
    const Frame& outer = t.frames[now[now.size() - 1 - k]];
    std::string inner = where(f.location);
    Location caller = f.location;
    caller.file = std::string(t.str(outer.file));
    caller.line = outer.line;
    std::string at = "at " + inner + ":";
    if (auto pos = f.message.find(at); pos != std::string::npos)
      f.message.replace(pos, at.size(), fmt::format("at {} (inside {}):", where(caller), inner));
    f.notes.push_back(advice("DYNSHAPE001", "caller_note", {{"inner", inner}, {"caller", where(caller)}}));
    f.location = std::move(caller);
  }

  // Sites share a cause when they change in the same steps or when the sizes that vary overlap
  // (a short batch reaches the logging after optimizer.step() one step later than the model).
  static size_t cause_of(std::vector<size_t>& parent, size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }

  static void merge_by_cause(const Trace& t, std::vector<SiteFinding>& per_site, std::vector<Finding>& out) {
    constexpr size_t kListedSites = 8;
    std::vector<size_t> parent(per_site.size());
    for (size_t i = 0; i < parent.size(); ++i) parent[i] = i;
    std::unordered_map<std::string, size_t> by_steps;
    std::unordered_map<int64_t, size_t> by_size;
    // The site that changed first leads (the DataLoader line before the logging that sees the
    // short batch a step later); then the first in program order.
    auto leads = [&](size_t a, size_t b) {
      return std::pair(per_site[a].first_change, a) < std::pair(per_site[b].first_change, b);
    };
    auto join = [&](size_t a, size_t b) {
      a = cause_of(parent, a), b = cause_of(parent, b);
      if (a == b) return;
      if (leads(a, b)) parent[b] = a;
      else parent[a] = b;
    };
    for (size_t i = 0; i < per_site.size(); ++i) {
      if (auto [it, fresh] = by_steps.try_emplace(per_site[i].steps, i); !fresh) join(it->second, i);
      for (int64_t v : per_site[i].varying)
        if (auto [it, fresh] = by_size.try_emplace(v, i); !fresh) join(it->second, i);
    }
    std::unordered_map<size_t, size_t> group;   // cause -> index into out
    std::unordered_map<size_t, size_t> others;  // index into out -> sites folded in
    std::vector<size_t> order(per_site.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    // Each cause's leading site first, so it is the finding and the others its notes.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return (cause_of(parent, a) == a) > (cause_of(parent, b) == b);
    });
    // index into out -> the cause's earliest new-shape op and an op of its site before the change
    std::unordered_map<size_t, std::pair<uint32_t, uint32_t>> first_new;
    for (size_t i : order) {
      Finding& f = per_site[i].finding;
      auto [it, fresh] = group.try_emplace(cause_of(parent, i), out.size());
      auto& earliest = first_new.try_emplace(it->second, kNone, kNone).first->second;
      if (per_site[i].first_new_op < earliest.first) earliest = {per_site[i].first_new_op, per_site[i].steady_op};
      if (fresh) {
        f.metrics.push_back({"sites", 1});
        out.push_back(std::move(f));
        continue;
      }
      Finding& first = out[it->second];
      size_t& n = others[it->second];
      ++n;
      add_saturating(first.cost_ns, f.cost_ns);
      // distinct_shapes and steps stay the first site's: its message states them (issue 30: "3
      // distinct shapes" beside distinct_shapes=6, another site's count).
      for (Metric& m : first.metrics) {
        if (m.key == "sites") m.value += 1;
        else if (m.key == "new_shapes") m.value += f.metric("new_shapes");
      }
      if (n <= kListedSites)
        first.notes.push_back(advice("DYNSHAPE001", "same_cause_note", {{"where", where(f.location)}, {"op", f.location.op}}));
    }
    for (auto& [index, ops] : first_new) name_the_caller(t, ops.first, ops.second, out[index]);
    for (auto& [index, n] : others) {
      Finding& f = out[index];
      f.message += fmt::format("; {} more call site{} change{} shape with it (same steps or same sizes): one cause, first seen here",
                               n, n == 1 ? "" : "s", n == 1 ? "s" : "");
      if (n > kListedSites) f.notes.push_back(advice("DYNSHAPE001", "more_sites_note", {{"count", n - kListedSites}}));
    }
  }
};

}  // namespace

const Rule& dynshape001_rule() {
  static const DynamicShapes rule;
  return rule;
}

}  // namespace npud
