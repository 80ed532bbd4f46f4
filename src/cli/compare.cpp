// `npu-doctor compare REF TARGET`: two tensor dumps of the same program (a trusted run and
// the run under test) side by side: metrics per matched tensor (docs/metrics.md), the first
// divergence with its module/op and file:line, unmatched entries. See docs/compare.md.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/progress.hpp"
#include "util/input_error.hpp"
#include "numeric/compare.hpp"
#include "report/escape.hpp"
#include "report/json_writer.hpp"
#include "report/report.hpp"

namespace npud {
namespace {

struct CompareCliOptions {
  std::string ref, target;
  std::string format = "text";
  std::string output;
  bool all = false;
  bool quiet = false;
  unsigned threads = 0;
  std::string mapping;  // --mapping FILE (numeric/key_mapping.hpp)
  Thresholds thresholds;
};


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

// Pairs whose numbers were compared (tensors or statistics): none means the comparison said
// nothing, whatever the key matching found.
size_t compared_pairs(const CompareResult& res) {
  size_t n = 0;
  for (const PairResult& p : res.pairs)
    n += p.status == PairResult::Status::Compared || p.status == PairResult::Status::StatsCompared ||
         p.status == PairResult::Status::ShapeMismatch;
  return n;
}
bool nothing_compared(const CompareResult& res) { return compared_pairs(res) == 0; }

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

void render_text(std::ostream& os, const Dump& ref, const Dump& target, const CompareResult& res,
                 const CompareCliOptions& o) {
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
  } else if (nothing_compared(res)) {
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
  if (nothing_compared(res)) os << "Nothing was compared: exit code 2 (a broken or unrelated target is not a pass).\n";
}

// --- json ------------------------------------------------------------------------------------

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

void render_json(std::ostream& os, const Dump& ref, const Dump& target, const CompareResult& res,
                 const CompareCliOptions& o) {
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
  w.field("compared", uint64_t(compared_pairs(res)));
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

int compare_command(const CompareCliOptions& o) {
  if (!output_writable_or_report(o.output)) return kExitBadInput;   // before reading the dumps
  Dump ref, target;
  CompareResult res;
  try {
    KeyMapping mapping;
    if (!o.mapping.empty()) mapping = read_key_mapping(o.mapping);
    ref = read_dump(o.ref);
    target = read_dump(o.target);
    Progress progress("comparing tensors", !o.quiet);
    CompareOptions co;
    co.thresholds = o.thresholds;
    co.threads = o.threads;
    if (!o.mapping.empty()) co.mapping = &mapping;
    co.on_progress = [&](uint64_t done, uint64_t total) { progress.update(done, total); };
    res = compare_dumps(ref, target, co);
    progress.finish();
  } catch (const InputError& e) {
    std::cerr << "npu-doctor: error: " << terminal_safe(e.describe()) << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "npu-doctor: error: " << terminal_safe(e.what()) << "\n";
    return kExitBadInput;
  }
  bool written = emit_report(o.output, false, [&](std::ostream& os, bool) {
    if (o.format == "json") render_json(os, ref, target, res, o);
    else render_text(os, ref, target, res, o);
  }, !o.quiet);
  if (!written) return kExitBadInput;
  if (res.diverging) return kExitFindings;
  // A target none of whose entries could be compared is a broken input, not a pass (as an
  // empty .npy target directory is).
  return nothing_compared(res) ? kExitBadInput : kExitClean;
}

}  // namespace

void add_compare_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "compare", "Compare two tensor dumps of the same program (npu-doctor run --dump, plain trees of .npy or "
                 "torch.save .pt files, msprobe dumps): metrics per tensor and the first divergence");
  auto o = std::make_shared<CompareCliOptions>();
  cmd->add_option("REF", o->ref, "reference dump (the trusted run, e.g. fp32): directory, index.jsonl or dump.json")
      ->required();
  cmd->add_option("TARGET", o->target, "dump of the run under test")->required();
  cmd->add_option("--mapping", o->mapping,
                  "rename the target's entries before matching: msprobe's data_mapping/cell_mapping YAML, one "
                  "`name: reference name` per line (two frameworks: `npu-doctor docs compare`)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--format", o->format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  add_output_option(*cmd, o->output, &o->format);
  cmd->add_flag("-a,--all,--verbose", o->all, "list every matched tensor, not only the diverging ones");
  cmd->add_flag("-q,--quiet", o->quiet, "no progress on stderr");
  cmd->add_option("--threads", o->threads, "threads for the metrics (default: all cores)")->check(finite_in(0, 4096));
  cmd->add_option("--min-cos", o->thresholds.min_cos, "a tensor diverges when its cosine similarity is below this")
      ->check(finite_in(-1, 1))
      ->capture_default_str();
  cmd->add_option("--max-norm-ratio-err", o->thresholds.max_norm_ratio_err,
                  "a tensor diverges when ||target|| / ||reference|| is off 1 by more than this (catches rescaling)")
      ->check(finite_in(0, 1e300))
      ->capture_default_str();
  cmd->add_option("--max-stat-rel", o->thresholds.max_stat_rel,
                  "statistics-only dumps: a tensor diverges when Max, Min or Norm differ by more than this, relatively")
      ->check(finite_in(0, 1e300))
      ->capture_default_str();
  cmd->footer("Metrics and thresholds: `npu-doctor docs metrics`. Layouts and matching: `npu-doctor docs formats/dump`. Exit codes: 0 no "
              "divergence, 1 divergence found, 2 bad input (the message names the file and byte offset), nothing "
              "compared (no pair with tensor data or statistics on both sides), or usage.");
  cmd->callback([o, &exit_code] { exit_code = compare_command(*o); });
}

}  // namespace npud
