#include "numeric/compare.hpp"

#include <cmath>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/input_error.hpp"
#include "numeric/tensor_file.hpp"

namespace npud {

std::string shape_text(const std::vector<int64_t>& s) { return fmt::format("[{}]", fmt::join(s, ",")); }

std::string_view status_name(PairResult::Status s) {
  switch (s) {
    case PairResult::Status::Compared: return "compared";
    case PairResult::Status::StatsCompared: return "statistics";
    case PairResult::Status::ShapeMismatch: return "shape_mismatch";
    case PairResult::Status::NotComparable: return "not_comparable";
  }
  return "?";
}

namespace {

// The dtype an index names against the tensor file's. bfloat16 is saved to .npy widened to
// float32 (numpy has no bfloat16); a dtype neither file kind holds here (complex, float8) is
// not checked.
bool dtype_agrees(std::string_view index_dtype, DType file) {
  if (index_dtype.empty() || index_dtype == dtype_name(file)) return true;
  if (index_dtype == "bfloat16") return file == DType::F32;
  for (DType d : {DType::F16, DType::F32, DType::F64, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8,
                  DType::U16, DType::U32, DType::U64, DType::Bool})
    if (index_dtype == dtype_name(d)) return false;
  return true;
}


// Pairs by key; the k-th occurrence of a key on one side goes with the k-th on the other.
std::vector<std::pair<size_t, size_t>> match_by_key(const std::vector<std::string>& ref,
                                                   const std::vector<std::string>& target) {
  std::unordered_map<std::string_view, std::deque<size_t>> by_key;
  for (size_t i = 0; i < target.size(); ++i) by_key[target[i]].push_back(i);
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < ref.size(); ++i) {
    auto it = by_key.find(ref[i]);
    if (it == by_key.end() || it->second.empty()) continue;
    out.emplace_back(i, it->second.front());
    it->second.pop_front();
  }
  return out;
}

// Pairs the k-th entry of each (group, shape) on one side with the k-th on the other.
std::vector<std::pair<size_t, size_t>> match_by_order(const Dump& ref, const Dump& target) {
  std::map<std::string, std::deque<size_t>> queues;
  auto group_key = [](const DumpEntry& e) { return e.group + "|" + shape_text(e.shape); };
  for (size_t i = 0; i < target.entries.size(); ++i) queues[group_key(target.entries[i])].push_back(i);
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < ref.entries.size(); ++i) {
    auto it = queues.find(group_key(ref.entries[i]));
    if (it == queues.end() || it->second.empty()) continue;
    out.emplace_back(i, it->second.front());
    it->second.pop_front();
  }
  return out;
}

void compare_stats(const TensorStats& r, const TensorStats& t, const Thresholds& th, PairResult& out) {
  out.status = PairResult::Status::StatsCompared;
  struct One { const char* name; const std::optional<double>& r; const std::optional<double>& t; bool decides; };
  // Mean is reported but does not decide: it cancels to near zero for centred data.
  const One all[] = {{"Max", r.max, t.max, true}, {"Min", r.min, t.min, true},
                     {"Mean", r.mean, t.mean, false}, {"Norm", r.norm, t.norm, true}};
  for (const One& o : all) {
    if (!o.r || !o.t) continue;
    StatDiff d;
    d.name = o.name;
    d.ref = *o.r;
    d.target = *o.t;
    bool rf = std::isfinite(d.ref), tf = std::isfinite(d.target);
    if (rf && tf) {
      d.abs = std::fabs(d.target - d.ref);
      d.rel = d.abs / std::max(std::fabs(d.ref), 0x1p-24);
      if (o.decides && d.rel > th.max_stat_rel && !out.diverges) {
        out.diverges = true;
        out.reason = fmt::format("{} differs by {:.3g} relative ({} vs {})", o.name, d.rel, d.ref, d.target);
      }
    } else if (rf && !tf && !out.diverges) {
      out.diverges = true;
      out.reason = fmt::format("{} is {} in the target only", o.name, d.target);
    }
    out.stats.push_back(d);
  }
  if (out.stats.empty()) {
    out.status = PairResult::Status::NotComparable;
    out.reason = "no statistic present on both sides";
  }
}

// Why a diverging pair diverges, the criteria in diverges()'s order of importance.
std::string metrics_reason(const TensorMetrics& m, const Thresholds& th) {
  if (m.gained_nonfinite())
    return fmt::format("gained NaN/Inf ({} NaN, {} Inf; reference {} NaN, {} Inf)", m.nan, m.inf, m.nan_ref, m.inf_ref);
  if (m.nonfinite_mismatch > 0)
    return fmt::format("NaN/+Inf/-Inf differ at {} position{} ({} NaN, {} Inf; reference {} NaN, {} Inf)",
                       m.nonfinite_mismatch, m.nonfinite_mismatch == 1 ? "" : "s", m.nan, m.inf, m.nan_ref, m.inf_ref);
  if (m.has_cos() && m.cos < th.min_cos) return fmt::format("cosine similarity {:.6f} < {}", m.cos, th.min_cos);
  return fmt::format("norm ratio {:.6g} (target / reference) is off 1 by more than {} (a rescaled tensor: cos is "
                     "{:.6f}, max abs error {:.4g})",
                     m.norm_ratio, th.max_norm_ratio_err, m.cos, m.max_abs);
}

constexpr uint64_t kMaxReadPerInputByte = 64;
constexpr uint64_t kReadAllowance = uint64_t(8) << 30;

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t out;
  return __builtin_mul_overflow(a, b, &out) ? UINT64_MAX / 2 : out;
}

uint64_t file_bytes(const std::string& f) {
  std::error_code ec;
  auto n = std::filesystem::file_size(f, ec);
  return ec ? 0 : uint64_t(n);
}

// What a pair reads from one side (progress, "tensor data read"): the whole tensor file, or
// a tensor's elements when it is one of several in a .pt file (a state_dict).
uint64_t entry_bytes(const DumpEntry& e) {
  if (e.member.empty()) return file_bytes(e.file);
  uint64_t n = 1, size = 4;
  for (DType d : {DType::F16, DType::BF16, DType::F32, DType::F64, DType::I8, DType::I16, DType::I32, DType::I64,
                  DType::U8, DType::U16, DType::U32, DType::U64, DType::Bool})
    if (e.dtype == dtype_name(d)) size = dtype_size(d);
  for (int64_t dim : e.shape)
    if (__builtin_mul_overflow(n, uint64_t(dim), &n)) return UINT64_MAX / 4;
  return __builtin_mul_overflow(n, size, &n) ? UINT64_MAX / 4 : n;
}

}  // namespace

CompareResult compare_dumps(const Dump& ref, const Dump& target, const CompareOptions& opts) {
  CompareResult res;
  // Each side's keys in the reference framework's words (numeric/key_mapping.hpp): msprobe's
  // MindSpore renames on a MindSpore side facing another framework, the user's file on the target.
  static const KeyMapping kNoFile;
  const KeyMapping& file = opts.mapping ? *opts.mapping : kNoFile;
  bool ref_ms = ref.framework == "mindspore", target_ms = target.framework == "mindspore";
  res.framework_renames = ref_ms != target_ms;
  auto keys_of = [&](const Dump& d, bool builtin, bool with_file) {
    std::vector<std::string> keys;
    keys.reserve(d.entries.size());
    for (const DumpEntry& e : d.entries) {
      keys.push_back(map_key(with_file ? file : kNoFile, e.key, builtin));
      if (keys.back() != e.key) ++res.renamed;
    }
    return keys;
  };
  std::vector<std::string> ref_keys = keys_of(ref, res.framework_renames && ref_ms, false);
  std::vector<std::string> target_keys = keys_of(target, res.framework_renames && target_ms, opts.mapping != nullptr);
  auto pairs = match_by_key(ref_keys, target_keys);
  size_t smaller = std::min(ref.entries.size(), target.entries.size());
  // Keys differ wholesale (two frameworks, renamed modules): fewer than half match.
  if (smaller > 0 && pairs.size() * 2 < smaller) {
    pairs = match_by_order(ref, target);
    res.by_order = true;
  }
  std::vector<bool> ref_used(ref.entries.size()), target_used(target.entries.size());
  uint64_t total = 0;
  for (auto [ri, ti] : pairs) {
    ref_used[ri] = target_used[ti] = true;
    const DumpEntry &r = ref.entries[ri], &t = target.entries[ti];
    if (!r.file.empty() && !t.file.empty() && r.shape == t.shape) total += entry_bytes(r) + entry_bytes(t);
  }
  for (size_t i = 0; i < ref_used.size(); ++i)
    if (!ref_used[i]) res.only_ref.push_back(i);
  for (size_t i = 0; i < target_used.size(); ++i)
    if (!target_used[i]) res.only_target.push_back(i);

  // Work bounded by the input: a pair of views compared before is not read again, and the
  // bytes read past the cache stay within kMaxReadPerInputByte times the files' own bytes
  // (plus kReadAllowance): N overlapping views of one storage cannot turn megabytes into days.
  std::set<std::string> files;
  for (auto [ri, ti] : pairs)
    for (const DumpEntry* e : {&ref.entries[ri], &target.entries[ti]})
      if (!e->file.empty()) files.insert(e->file);
  uint64_t input_bytes = 0, read_bytes = 0;
  for (const std::string& f : files) input_bytes += file_bytes(f);
  const uint64_t max_read = saturating_mul(input_bytes, kMaxReadPerInputByte) + kReadAllowance;
  std::unordered_map<std::string, TensorMetrics> compared;   // view_identity pair -> its metrics

  uint64_t done = 0;
  std::shared_ptr<MappedPt> last_ref_pt, last_target_pt;  // one parse per .pt file holding many tensors
  for (auto [ri, ti] : pairs) {
    const DumpEntry &r = ref.entries[ri], &t = target.entries[ti];
    PairResult p;
    p.ref = ri;
    p.target = ti;
    if (r.shape != t.shape) {
      p.status = PairResult::Status::ShapeMismatch;
      p.diverges = true;
      p.reason = fmt::format("shape {} in the reference, {} in the target", shape_text(r.shape), shape_text(t.shape));
    } else if (!r.file.empty() && !t.file.empty()) {
      TensorFile a(r.file, r.member, &last_ref_pt), b(t.file, t.member, &last_target_pt);
      if (std::string u = a.uncompared_dtype().empty() ? b.uncompared_dtype() : a.uncompared_dtype(); !u.empty()) {
        // msprobe's statistics still say something about it.
        if (r.stats && t.stats) {
          compare_stats(*r.stats, *t.stats, opts.thresholds, p);
        } else {
          p.status = PairResult::Status::NotComparable;
          p.reason = fmt::format("{} tensor: complex and float8 dtypes are not compared", u);
        }
        if (p.diverges && !res.first_divergence) res.first_divergence = res.pairs.size();
        res.diverging += p.diverges;
        res.pairs.push_back(std::move(p));
        continue;
      }
      for (const auto* side : {&a, &b}) {
        const DumpEntry& e = side == &a ? r : t;
        if (side->shape() != e.shape)
          throw InputError(side->path(), side->data_offset(),
                           fmt::format("the file's shape {} is not the index's {} (for {})",
                                       shape_text(side->shape()), shape_text(e.shape), e.key));
        if (!dtype_agrees(e.dtype, side->dtype()))
          throw InputError(side->path(), side->data_offset(),
                           fmt::format("the file's dtype {} is not the index's {} (for {}); the metrics would be "
                                       "computed on the wrong precision",
                                       dtype_name(side->dtype()), e.dtype, e.key));
      }
      if (a.fortran_order() != b.fortran_order()) {
        size_t non_unit = 0;
        for (int64_t dim : r.shape) non_unit += dim > 1;
        if (non_unit > 1)
          throw InputError(a.fortran_order() ? a.path() : b.path(), 0,
                           fmt::format("fortran_order differs from {} (one side is column-major): re-save both in "
                                       "C order", a.fortran_order() ? b.path() : a.path()),
                           false);
      }
      MetricsOptions mo;
      mo.threads = opts.threads;
      uint64_t pair_bytes = entry_bytes(r) + entry_bytes(t);
      uint64_t n = a.count();
      if (opts.on_progress && n > 0)
        mo.on_progress = [&](uint64_t elems) { opts.on_progress(done + pair_bytes * std::min(elems, n) / n, total); };
      std::string identity = a.view_identity() + '\0' + b.view_identity();
      if (auto seen = compared.find(identity); seen != compared.end()) {
        p.metrics = seen->second;
      } else {
        read_bytes += pair_bytes;
        if (read_bytes > max_read)
          throw InputError(a.path(), 0,
                           fmt::format("comparing would read more than {} GiB of tensor data from {} MiB of files "
                                       "(entries that are overlapping views of one storage?): stopped at {}",
                                       max_read >> 30, input_bytes >> 20, r.key),
                           false);
        p.metrics = compute_metrics(a.view(), b.view(), mo);
        compared.emplace(std::move(identity), p.metrics);
        res.tensor_bytes += pair_bytes;
      }
      done += pair_bytes;
      p.status = PairResult::Status::Compared;
      p.diverges = diverges(p.metrics, opts.thresholds);
      if (p.diverges) p.reason = metrics_reason(p.metrics, opts.thresholds);
    } else if (r.stats && t.stats) {
      compare_stats(*r.stats, *t.stats, opts.thresholds, p);
    } else {
      p.status = PairResult::Status::NotComparable;
      p.reason = "no tensor data or statistics on both sides";
    }
    if (p.diverges) {
      ++res.diverging;
      if (!res.first_divergence) res.first_divergence = res.pairs.size();
    }
    res.pairs.push_back(std::move(p));
  }
  if (opts.on_progress) opts.on_progress(total, total);
  return res;
}

size_t CompareResult::compared() const {
  size_t n = 0;
  for (const PairResult& p : pairs)
    n += p.status == PairResult::Status::Compared || p.status == PairResult::Status::StatsCompared ||
         p.status == PairResult::Status::ShapeMismatch;
  return n;
}

}  // namespace npud
