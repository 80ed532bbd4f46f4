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
#include "util/escape.hpp"
#include "report/compare_report.hpp"

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
    const CompareRenderOptions ro{o.all, o.mapping, o.thresholds};
    if (o.format == "json") render_compare_json(os, ref, target, res, ro);
    else render_compare_text(os, ref, target, res, ro);
  }, !o.quiet);
  if (!written) return kExitBadInput;
  if (res.diverging) return kExitFindings;
  // A target none of whose entries could be compared is a broken input, not a pass (as an
  // empty .npy target directory is).
  return res.compared() == 0 ? kExitBadInput : kExitClean;
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
