// Two dumps side by side: entries matched by key (or by order when the keys differ
// wholesale), the metrics of docs/metrics.md for each pair, and the first divergence
// (docs/formats/dump.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "numeric/dump.hpp"
#include "numeric/key_mapping.hpp"
#include "numeric/metrics.hpp"

namespace npud {

// One statistic of msprobe's statistics task on both sides.
struct StatDiff {
  const char* name = "";  // "Max", "Min", "Mean", "Norm"
  double ref = 0, target = 0;
  double abs = 0, rel = 0;
};

struct PairResult {
  size_t ref = 0, target = 0;  // indices into the dumps' entries
  enum class Status { Compared, StatsCompared, ShapeMismatch, NotComparable } status = Status::Compared;
  TensorMetrics metrics;              // Compared
  std::vector<StatDiff> stats;  // StatsCompared
  bool diverges = false;
  std::string reason;           // why it diverges (or is not comparable), for people
};

struct CompareResult {
  std::vector<PairResult> pairs;  // in the reference's order
  std::vector<size_t> only_ref, only_target;
  bool by_order = false;          // keys differed wholesale: paired by order within kind and shape
  size_t renamed = 0;             // keys renamed before matching (numeric/key_mapping.hpp)
  bool framework_renames = false; // one side is MindSpore: msprobe's renames applied to it
  std::optional<size_t> first_divergence;  // index into pairs
  uint64_t tensor_bytes = 0;      // bytes of tensor data read (both sides)
  size_t diverging = 0;
  // Pairs whose numbers were compared (tensors or statistics): none means the comparison said
  // nothing, whatever the key matching found.
  size_t compared() const;
};

struct CompareOptions {
  Thresholds thresholds;
  unsigned threads = 0;  // 0 = hardware concurrency
  const KeyMapping* mapping = nullptr;  // `--mapping FILE`, applied to the target's keys
  // Progress: tensor bytes done, total.
  std::function<void(uint64_t done, uint64_t total)> on_progress;
};

// Throws InputError when a tensor file is unreadable, malformed, or disagrees with its index.
CompareResult compare_dumps(const Dump& ref, const Dump& target, const CompareOptions& opts = {});

std::string_view status_name(PairResult::Status s);  // "compared", "statistics", "shape_mismatch", "not_comparable"

// "[4,8]": a shape as the compare outputs print it.
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace npud
