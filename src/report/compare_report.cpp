// The reports of `npu-doctor compare` (cli/compare.cpp): text and JSON (docs/compare.md).
#include "report/compare_report.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/escape.hpp"
#include "util/json_writer.hpp"
#include "report/render.hpp"

namespace npud {
namespace {

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.4g}", v);
}

std::string describe_dump(const Dump& d) {
  std::string what = std::string(layout_name(d.layout)) + " dump";
  if (!d.framework.empty()) what += ", " + d.framework;
  if (d.layout == DumpLayout::Msprobe) what += ", task " + d.task;
  return fmt::format("{} ({}, {} tensors)", terminal_safe(d.path), terminal_safe(what), d.entries.size());
}

std::string where(const DumpEntry& e) {
  std::string s;
  if (e.kind == "module") s = "module " + e.name;
  else if (e.kind == "op") s = "op " + e.name;
  else s = e.name;
  if (!e.io.empty()) s += fmt::format(", {} {}", e.io, e.arg);
  return terminal_safe(s);
}


// --- text ------------------------------------------------------------------------------------
// Keys, names and paths come from the dumps (msprobe keys are module and op names): they pass
// through terminal_safe like every text report's names.

void metrics_row(std::ostream& os, const std::string& key_raw, const DumpEntry& r, const DumpEntry& t,
                 const PairResult& p) {
  std::string dtypes = terminal_safe(r.dtype == t.dtype ? r.dtype : r.dtype + "/" + t.dtype);
  std::string key = terminal_safe(key_raw);
  std::string mark = p.diverges ? "!" : " ";
  if (p.status == PairResult::Status::Compared) {
    const TensorMetrics& m = p.metrics;
    os << fmt::format("{} {:<40} {:<17} {:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>5} {:>5} {:>5} {:>5}\n", mark,
                      key, dtypes, shape_text(r.shape), m.has_cos() ? fmt::format("{:.6f}", m.cos) : "null",
                      m.has_norm_ratio() ? num(m.norm_ratio) : "null", num(m.max_abs), num(m.max_rel), num(m.rmse),
                      fmt::format("{:.2f}%", 100 * m.gt_5e3), m.nan, m.inf, m.overflow, m.underflow);
  } else if (p.status == PairResult::Status::StatsCompared) {
    std::string cells;
    for (const StatDiff& d : p.stats)
      cells += fmt::format("  {} {} vs {} (rel {})", d.name, num(d.ref), num(d.target), num(d.rel));
    os << fmt::format("{} {:<40} {:<17} {:<14}{}\n", mark, key, dtypes, shape_text(r.shape), cells);
  } else {
    os << fmt::format("{} {:<40} {:<17} {:<14}  {}\n", mark, key, dtypes, shape_text(r.shape), terminal_safe(p.reason));
  }
}

}  // namespace

void render_compare_text(std::ostream& os, const Dump& ref, const Dump& target, const CompareResult& res,
                         const CompareRenderOptions& o) {
  os << "npu-doctor compare\n";
  os << "  reference: " << describe_dump(ref) << "\n";
  os << "  target:    " << describe_dump(target) << "\n";
  for (const auto* d : {&ref, &target})
    for (const std::string& n : d->notes) os << "  note: " << terminal_safe(n) << "\n";
  bool stats_only = ref.statistics_only() || target.statistics_only();
  if (stats_only)
    os << "  Tensors were not dumped (msprobe statistics task): comparing Max/Min/Mean/Norm only.\n";
  os << fmt::format("  {} pairs matched {}; {} only in the reference, {} only in the target.\n", res.pairs.size(),
                    res.by_order ? "by order within kind and shape (the keys differ between the dumps)" : "by key",
                    res.only_ref.size(), res.only_target.size());
  if (res.renamed) {
    std::vector<std::string> by;
    if (res.framework_renames) by.push_back("msprobe's MindSpore-to-PyTorch names");
    if (!o.mapping.empty()) by.push_back(terminal_safe(o.mapping));
    os << fmt::format("  {} key{} renamed before matching ({}).\n", res.renamed, res.renamed == 1 ? "" : "s",
                      fmt::join(by, " and "));
  }
  os << "\n";

  if (res.first_divergence) {
    const PairResult& p = res.pairs[*res.first_divergence];
    const DumpEntry &r = ref.entries[p.ref], &t = target.entries[p.target];
    os << "First divergence: " << terminal_safe(r.key)
       << ((res.by_order || res.renamed) && t.key != r.key ? "  (target: " + terminal_safe(t.key) + ")" : "") << "\n";
    os << "  " << where(r) << "\n";
    const DumpEntry& located = !t.stack.empty() ? t : r;  // the run under test: its code diverged
    if (!located.stack.empty()) {
      const DumpFrame& f = located.stack.front();
      os << fmt::format("  at {}:{}{}\n", terminal_safe(f.file), f.line,
                        f.function.empty() ? "" : " in " + terminal_safe(f.function));
    }
    os << "  " << terminal_safe(p.reason) << "\n\n";
  } else if (res.compared() == 0) {
    os << "Nothing was compared: no matched pair holds tensor data or statistics on both sides.\n\n";
  } else {
    os << "No divergence.\n\n";
  }

  bool any_row = false;
  for (const PairResult& p : res.pairs) {
    if (!o.all && !p.diverges) continue;
    if (!any_row) {
      os << (o.all ? "All matched tensors" : "Diverging tensors") << " (! = diverges):\n";
      if (!stats_only)
        os << fmt::format("  {:<40} {:<17} {:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>5} {:>5} {:>5} {:>5}\n",
                          "key", "dtype", "shape", "cos", "norm", "max_abs", "max_rel", "rmse", ">5e-3", "nan", "inf",
                          "ovf", "unf");
      any_row = true;
    }
    metrics_row(os, ref.entries[p.ref].key, ref.entries[p.ref], target.entries[p.target], p);
  }
  if (any_row) os << "\n";

  auto list = [&](const char* title, const Dump& d, const std::vector<size_t>& idx) {
    if (idx.empty()) return;
    os << fmt::format("Only in the {} ({}):\n", title, idx.size());
    size_t shown = 0;
    for (size_t i : idx) {
      if (!o.all && shown == 20) {
        os << fmt::format("  ... {} more (--all lists them)\n", idx.size() - shown);
        break;
      }
      os << "  " << terminal_safe(d.entries[i].key) << " " << shape_text(d.entries[i].shape) << "\n";
      ++shown;
    }
    os << "\n";
  };
  list("reference", ref, res.only_ref);
  list("target", target, res.only_target);

  size_t mismatches = 0, not_comparable = 0;
  for (const PairResult& p : res.pairs) {
    mismatches += p.status == PairResult::Status::ShapeMismatch;
    not_comparable += p.status == PairResult::Status::NotComparable;
  }
  os << fmt::format("Summary: {} of {} matched tensors diverge", res.diverging, res.pairs.size());
  if (mismatches) os << fmt::format(" ({} by shape)", mismatches);
  if (not_comparable) os << fmt::format("; {} not comparable", not_comparable);
  if (stats_only)
    os << fmt::format(" (a statistic off by > {} relative, or non-finite in the target only)",
                      o.thresholds.max_stat_rel);
  else
    os << fmt::format(" (cos < {}, norm ratio off 1 by > {}, or NaN/Inf gained or moved)", o.thresholds.min_cos,
                      o.thresholds.max_norm_ratio_err);
  if (res.tensor_bytes >= 1000000) os << fmt::format("; {:.1f} MB of tensor data read.\n", double(res.tensor_bytes) / 1e6);
  else os << fmt::format("; {} bytes of tensor data read.\n", res.tensor_bytes);
  if (!o.all && res.pairs.size() > res.diverging) os << "(--all shows every matched tensor)\n";
  if (res.compared() == 0) os << "Nothing was compared: exit code 2 (a broken or unrelated target is not a pass).\n";
}

// --- json ------------------------------------------------------------------------------------

namespace {

void write_dump_json(JsonWriter& w, const Dump& d) {
  w.begin_object();
  w.field("path", d.path);
  w.field("layout", layout_name(d.layout));
  w.field("index", d.index);
  w.field("task", d.task);
  w.field("framework", d.framework);
  w.field("entries", uint64_t(d.entries.size()));
  w.key("notes").begin_array();
  for (const std::string& n : d.notes) w.value(n);
  w.end_array();
  w.end_object();
}

void write_shape(JsonWriter& w, const std::vector<int64_t>& s) {
  w.begin_array();
  for (int64_t v : s) w.value(v);
  w.end_array();
}

void write_pair_json(JsonWriter& w, const Dump& ref, const Dump& target, const PairResult& p) {
  const DumpEntry &r = ref.entries[p.ref], &t = target.entries[p.target];
  w.begin_object();
  w.field("key", r.key);
  w.field("target_key", t.key);
  w.field("kind", r.kind);
  w.field("name", r.name);
  w.field("io", r.io);
  w.field("arg", r.arg);
  w.field("dtype_ref", r.dtype);
  w.field("dtype", t.dtype);
  w.key("shape_ref");
  write_shape(w, r.shape);
  w.key("shape");
  write_shape(w, t.shape);
  w.field("status", status_name(p.status));
  w.field("diverges", p.diverges);
  if (p.reason.empty()) w.key("reason").null();
  else w.field("reason", p.reason);
  w.key("metrics");
  if (p.status == PairResult::Status::Compared) {
    write_metrics_json(w, p.metrics, /*compare_fields=*/true);
  } else {
    w.null();
  }
  w.key("stats");
  if (p.status == PairResult::Status::StatsCompared) {
    w.begin_object();
    for (const StatDiff& d : p.stats) {
      w.key(d.name).begin_object();
      w.field("ref", d.ref);
      w.field("target", d.target);
      w.field("abs", d.abs);
      w.field("rel", d.rel);
      w.end_object();
    }
    w.end_object();
  } else {
    w.null();
  }
  const DumpEntry& located = !t.stack.empty() ? t : r;  // the run under test: its code diverged
  w.key("location");
  if (located.stack.empty()) {
    w.null();
  } else {
    const DumpFrame& f = located.stack.front();
    w.begin_object();
    w.field("file", f.file);
    w.field("line", f.line);
    w.field("function", f.function);
    w.end_object();
  }
  w.end_object();
}

}  // namespace

void render_compare_json(std::ostream& os, const Dump& ref, const Dump& target, const CompareResult& res,
                         const CompareRenderOptions& o) {
  JsonWriter w(os);
  w.begin_object();
  tool_header(w, "compare");
  w.key("ref");
  write_dump_json(w, ref);
  w.key("target");
  write_dump_json(w, target);
  w.field("matching", res.by_order ? "order" : "key");
  w.field("renamed_keys", uint64_t(res.renamed));
  if (!o.mapping.empty()) w.field("mapping", o.mapping);
  w.field("statistics_only", ref.statistics_only() || target.statistics_only());
  w.key("thresholds").begin_object();
  w.field("min_cos", o.thresholds.min_cos);
  w.field("max_norm_ratio_err", o.thresholds.max_norm_ratio_err);
  w.field("max_stat_rel", o.thresholds.max_stat_rel);
  w.end_object();
  w.key("summary").begin_object();
  w.field("matched", uint64_t(res.pairs.size()));
  w.field("diverging", uint64_t(res.diverging));
  w.field("only_ref", uint64_t(res.only_ref.size()));
  w.field("only_target", uint64_t(res.only_target.size()));
  w.field("tensor_bytes", res.tensor_bytes);
  w.field("compared", uint64_t(res.compared()));
  w.end_object();
  w.key("first_divergence");
  if (res.first_divergence) write_pair_json(w, ref, target, res.pairs[*res.first_divergence]);
  else w.null();
  w.key("pairs").begin_array();
  for (const PairResult& p : res.pairs) write_pair_json(w, ref, target, p);
  w.end_array();
  auto keys = [&](const char* k, const Dump& d, const std::vector<size_t>& idx) {
    w.key(k).begin_array();
    for (size_t i : idx) w.value(d.entries[i].key);
    w.end_array();
  };
  keys("only_ref", ref, res.only_ref);
  keys("only_target", target, res.only_target);
  w.end_object();
  os << "\n";
}

}  // namespace npud
