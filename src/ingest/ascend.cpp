// torch_npu profiler output → Trace. trace_view.json (Chrome trace JSON) is read by the
// Chrome reader; the CSV tables fill what it lacks. Merge rule and per-file mapping:
// docs/formats/ascend.md.
#include "ingest/ascend.hpp"
#include "ingest/reader_caps.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "ingest/chrome_json.hpp"
#include "ingest/communication_json.hpp"
#include "ingest/communication_ops.hpp"
#include "ingest/csv_table.hpp"
#include "ingest/step_trace_table.hpp"
#include "ingest/decimal_time.hpp"
#include "util/input_error.hpp"
#include "util/directory.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kOutputDir = "ASCEND_PROFILER_OUTPUT";
// A trace_view kernel and a kernel_details row are the same task when the names are equal
// and the starts differ by at most this much (both files print microseconds, rounded
// differently by some versions).
constexpr int64_t kMatchToleranceNs = 1000;


struct CsvKernel {
  std::string name;
  std::string core;   // Accelerator Core, raw: "AI_CORE", "AI_CPU", "HCCL", "N/A"
  int64_t start_abs_ns = 0;
  int64_t dur_ns = 0;
  int32_t stream = -1;
  int32_t device = -1;
  std::optional<int64_t> step_id;
  KernelDetail detail;              // StrIds still 0: the strings below are interned on merge
  std::string op_state, input_dtypes, op_type, input_shapes, output_shapes;
  bool has_detail = false;
};

// A PMU ratio cell: NaN when empty, N/A or not a number (a bad ratio loses one metric, not
// the file).
float ratio_of(std::string_view v) {
  v = trim(v);
  if (is_na(v)) return NAN;
  char* end = nullptr;
  std::string text(v);
  float r = std::strtof(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(r) ? r : NAN;
}

// The kernel_details columns of KernelDetail. Ratios older CANN splits by dtype
// (aic_mac_fp16_ratio, aiv_vec_fp32_ratio...) are summed.
struct DetailColumns {
  int op_state, dtypes, block_dim, mix_block_dim;
  int op_type, input_shapes, output_shapes;
  std::vector<std::pair<float KernelDetail::*, int>> times;   // *_time(us) columns kept as is
  struct Ratio {
    float KernelDetail::*field;
    std::vector<int> cols;
  };
  std::vector<Ratio> ratios;

  explicit DetailColumns(const Columns& cols, const std::vector<std::string>& header)
      : op_state(cols.find({"OP State"})),
        dtypes(cols.find({"Input Data Types"})),
        block_dim(cols.find({"Block Dim"})),
        mix_block_dim(cols.find({"Mix Block Dim"})),
        op_type(cols.find({"Type", "OP Type"})),
        input_shapes(cols.find({"Input Shapes"})),
        output_shapes(cols.find({"Output Shapes"})) {
    const std::pair<float KernelDetail::*, std::string_view> time_names[] = {
        {&KernelDetail::aicore_us, "aicore_time(us)"},       {&KernelDetail::aiv_us, "aiv_time(us)"},
        {&KernelDetail::aic_mte2_us, "aic_mte2_time(us)"},
        {&KernelDetail::aiv_mte2_us, "aiv_mte2_time(us)"},   {&KernelDetail::aic_fixpipe_us, "aic_fixpipe_time(us)"},
        {&KernelDetail::aiv_mte3_us, "aiv_mte3_time(us)"}};
    for (const auto& [field, column] : time_names)
      if (int c = cols.find({column}); c >= 0) times.emplace_back(field, c);
    const std::pair<float KernelDetail::*, std::string_view> names[] = {
        {&KernelDetail::aic_mac, "aic_mac"},       {&KernelDetail::aic_scalar, "aic_scalar"},
        {&KernelDetail::aic_mte1, "aic_mte1"},     {&KernelDetail::aic_mte2, "aic_mte2"},
        {&KernelDetail::aic_fixpipe, "aic_fixpipe"}, {&KernelDetail::aiv_vec, "aiv_vec"},
        {&KernelDetail::aiv_scalar, "aiv_scalar"}, {&KernelDetail::aiv_mte2, "aiv_mte2"},
        {&KernelDetail::aiv_mte3, "aiv_mte3"}};
    for (const auto& [field, prefix] : names) {
      Ratio r{field, {}};
      for (size_t i = 0; i < header.size(); ++i) {
        std::string_view h = trim(header[i]);
        // "aic_mac_ratio", or "aic_mac_fp16_ratio" (not "aic_mac_time(us)")
        if (h.starts_with(prefix) && h.ends_with("_ratio") &&
            (h.size() == prefix.size() + 6 || h[prefix.size()] == '_'))
          r.cols.push_back(int(i));
      }
      if (!r.cols.empty()) ratios.push_back(std::move(r));
    }
  }
  bool any() const {
    return op_state >= 0 || dtypes >= 0 || block_dim >= 0 || !ratios.empty() || op_type >= 0 || input_shapes >= 0;
  }

  void read(const std::vector<std::string>& row, CsvKernel& k) const {
    auto int_or_none = [](std::string_view v) {
      auto i = parse_int(v);
      return i && *i >= 0 && *i <= std::numeric_limits<int32_t>::max() ? int32_t(*i) : int32_t(-1);
    };
    if (op_state >= 0 && !is_na(row[size_t(op_state)])) k.op_state = std::string(trim(row[size_t(op_state)]));
    if (dtypes >= 0 && !is_na(row[size_t(dtypes)])) k.input_dtypes = std::string(trim(row[size_t(dtypes)]));
    // Shapes are quoted twice in some versions ("""4096,2,512""" reads as "4096,2,512").
    auto text_of = [&](int col) {
      std::string_view v = trim(row[size_t(col)]);
      while (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = trim(v.substr(1, v.size() - 2));
      return is_na(v) ? std::string() : std::string(v);
    };
    if (op_type >= 0) k.op_type = text_of(op_type);
    if (input_shapes >= 0) k.input_shapes = text_of(input_shapes);
    if (output_shapes >= 0) k.output_shapes = text_of(output_shapes);
    for (const auto& [field, col] : times) k.detail.*field = ratio_of(row[size_t(col)]);
    if (block_dim >= 0) k.detail.block_dim = int_or_none(row[size_t(block_dim)]);
    if (mix_block_dim >= 0) k.detail.mix_block_dim = int_or_none(row[size_t(mix_block_dim)]);
    for (const Ratio& r : ratios) {
      float sum = NAN;
      for (int c : r.cols) {
        float v = ratio_of(row[size_t(c)]);
        if (!std::isnan(v)) sum = std::isnan(sum) ? v : sum + v;
      }
      k.detail.*r.field = sum;
    }
    k.has_detail = true;
  }
};

TaskKind kind_of_core(std::string_view core) {
  core = trim(core);
  if (core == "AI_CPU") return TaskKind::AiCpu;
  if (core == "HCCL" || core == "COMMUNICATION") return TaskKind::Communication;
  if (is_na(core) || core.rfind("AI_", 0) == 0 || core.rfind("MIX_", 0) == 0 || core.rfind("DSA", 0) == 0)
    return TaskKind::Kernel;  // DSA_SQE: random-mask generation on the data accelerator
  return TaskKind::Other;
}

std::vector<CsvKernel> read_kernel_details(const std::string& path, uint64_t& bytes) {
  Table t(path);
  Columns cols(t.header());
  int name = t.required(cols, {"Name"});
  int start = t.required(cols, {"Start Time(us)", "Start Time"});
  int dur = t.required(cols, {"Duration(us)", "Duration"});
  int core = cols.find({"Accelerator Core", "Task Type"});
  int stream = cols.find({"Stream ID", "Stream Id"});
  int step = cols.find({"Step Id", "Step ID"});
  int device = cols.find({"Device_id", "Device ID", "Device Id"});
  DetailColumns details(cols, t.header());
  std::vector<CsvKernel> out;
  std::vector<std::string> row;
  // Ends and the span from the earliest start to the latest end must fit int64 ns: kernels
  // are rebased on the earliest start and the rules add durations (ingest/limits.hpp).
  int64_t min_start = std::numeric_limits<int64_t>::max(), max_end = std::numeric_limits<int64_t>::min();
  auto int32_or_none = [](std::optional<int64_t> v) {
    return v && *v >= 0 && *v <= std::numeric_limits<int32_t>::max() ? int32_t(*v) : int32_t(-1);
  };
  while (t.next(row)) {
    CsvKernel k;
    k.name = std::string(trim(row[size_t(name)]));
    k.start_abs_ns = t.time_ns(row, start, "Start Time(us)");
    k.dur_ns = t.time_ns(row, dur, "Duration(us)");
    if (k.dur_ns < 0) t.fail(size_t(dur), fmt::format("Duration(us): negative '{}'", row[size_t(dur)]));
    int64_t end, span;
    if (__builtin_add_overflow(k.start_abs_ns, k.dur_ns, &end))
      t.fail(size_t(dur), "Start Time(us) + Duration(us) is past the int64 nanosecond range (about 292 years)");
    min_start = std::min(min_start, k.start_abs_ns);
    max_end = std::max(max_end, end);
    if (__builtin_sub_overflow(max_end, min_start, &span))
      t.fail(size_t(start), fmt::format("Start Time(us) '{}' is so far from the other rows' that the kernels would "
                                        "span more than int64 nanoseconds hold (about 292 years)",
                                        row[size_t(start)]));
    if (core >= 0) k.core = std::string(trim(row[size_t(core)]));
    if (stream >= 0) k.stream = int32_or_none(parse_int(row[size_t(stream)]));
    if (device >= 0) k.device = int32_or_none(parse_int(row[size_t(device)]));
    if (step >= 0 && !is_na(row[size_t(step)])) {
      auto v = parse_int(row[size_t(step)]);
      if (!v) t.fail(size_t(step), fmt::format("Step Id: not an integer: '{}'", row[size_t(step)]));
      k.step_id = *v;
    }
    if (details.any()) details.read(row, k);
    out.push_back(std::move(k));
  }
  bytes += t.bytes_read();
  return out;
}

// step_trace_time.csv: per step, microseconds of Computing / Communication(Not Overlapped)
// / Overlapped / Communication / Free ... It has no timestamps, so it cannot place steps:
// the totals go to env (keys in docs/formats/ascend.md). `keep_rows` (no trace_view.json to
// measure steps from): the rows also go to step_trace_times, the rank's step table.
void read_step_trace_time(const std::string& path, Trace& trace, bool keep_rows) {
  Table t(path);
  Columns cols(t.header());
  StepTraceColumns step_cols(t, cols);
  keep_rows = keep_rows && step_cols.complete();
  struct Sum {
    const char* key;
    int col;
    int64_t ns = 0;
  };
  std::vector<Sum> sums = {{"npu_computing_us", cols.find({"Computing"})},
                           {"npu_communication_not_overlapped_us", cols.find({"Communication(Not Overlapped)"})},
                           {"npu_communication_us", cols.find({"Communication"})},
                           {"npu_free_us", cols.find({"Free"})}};
  std::vector<std::string> row;
  size_t steps = 0;
  while (t.next(row)) {
    ++steps;
    if (keep_rows) trace.step_trace_times.push_back(step_cols.read(t, row));
    for (Sum& s : sums)
      if (s.col >= 0 && !is_na(row[size_t(s.col)]) &&
          __builtin_add_overflow(s.ns, t.time_ns(row, s.col, t.header()[size_t(s.col)]), &s.ns))
        t.fail(size_t(s.col), fmt::format("{}: the total is out of range", t.header()[size_t(s.col)]));
  }
  trace.input_bytes += t.bytes_read();
  trace.set_env("npu_step_trace_steps", std::to_string(steps));
  for (const Sum& s : sums)
    if (s.col >= 0) trace.set_env(s.key, fmt::format("{}.{:03}", s.ns / 1000, s.ns % 1000));
}

// op_statistic.csv: per (OP Type, Core Type) call counts and total time. Aggregates only:
// kernels come from trace_view / kernel_details. Kept: the AI_CPU total, a slow-path hint.
void read_op_statistic(const std::string& path, Trace& trace) {
  Table t(path);
  Columns cols(t.header());
  int core = t.required(cols, {"Core Type"});
  int total = t.required(cols, {"Total Time(us)"});
  int64_t aicpu_ns = 0;
  std::vector<std::string> row;
  while (t.next(row))
    if (trim(row[size_t(core)]) == "AI_CPU" &&
        __builtin_add_overflow(aicpu_ns, t.time_ns(row, total, "Total Time(us)"), &aicpu_ns))
      t.fail(size_t(total), "Total Time(us): the AI_CPU total is out of range");
  trace.input_bytes += t.bytes_read();
  trace.set_env("npu_op_statistic_aicpu_us", fmt::format("{}.{:03}", aicpu_ns / 1000, aicpu_ns % 1000));
}

// Whether a name is there at all: a dangling symlink counts (reading it then fails with the
// file named) instead of passing for an absent file and a report of nothing.
bool present(const fs::path& f) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(f, ec));
}

bool has_output_files(const fs::path& dir) {
  for (const char* f : {"trace_view.json", "kernel_details.csv", "step_trace_time.csv", "op_statistic.csv"})
    if (present(dir / f)) return true;
  return false;
}

// The ASCEND_PROFILER_OUTPUT directory to read, from what the user pointed at.
fs::path locate_output_dir(const fs::path& p, Trace& trace) {
  std::error_code ec;
  if (fs::is_directory(p / kOutputDir, ec)) return p / kOutputDir;
  if (p.filename() == kOutputDir || has_output_files(p)) return p;
  std::vector<fs::path> runs;  // several *_ascend_pt: one per rank (or per run)
  std::vector<fs::directory_entry> entries = directory_entries(p, ec);
  if (ec) throw InputError(p.string(), 0, "cannot list the directory: " + ec.message(), false);
  for (const auto& e : entries)
    if (std::error_code entry_ec; e.is_directory(entry_ec) && fs::is_directory(e.path() / kOutputDir, entry_ec))
      runs.push_back(e.path());
  std::sort(runs.begin(), runs.end());
  if (runs.empty())
    throw InputError(p.string(), 0,
                     "not a torch_npu profiler output: no ASCEND_PROFILER_OUTPUT directory, trace_view.json or "
                     "kernel_details.csv here",
                     false);
  if (runs.size() > 1)
    trace.warnings.push_back({fmt::format("{} profiler outputs (one per rank?) in {}: reading only {}", runs.size(),
                                          p.string(), runs.front().filename().string()),
                              0});
  return runs.front() / kOutputDir;
}


// Steps from kernel_details' Step Id: each step spans its kernels. Used only when the
// trace has no steps of its own (trace_view's ProfilerStep#N ranges win).
void add_csv_steps(Trace& trace, const std::vector<CsvKernel>& rows, const std::vector<uint32_t>& kernel_of_row) {
  std::map<int64_t, std::pair<int64_t, int64_t>> extent;  // id -> [start, end) relative ns
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].step_id || kernel_of_row[i] == kNone) continue;
    const Kernel& k = trace.kernels[kernel_of_row[i]];
    auto [it, fresh] = extent.try_emplace(*rows[i].step_id, k.start_ns, k.start_ns + k.dur_ns);
    if (!fresh) {
      it->second.first = std::min(it->second.first, k.start_ns);
      it->second.second = std::max(it->second.second, k.start_ns + k.dur_ns);
    }
  }
  if (extent.empty()) return;
  std::vector<std::pair<int64_t, int64_t>> order;  // (start, id)
  for (const auto& [id, se] : extent) order.emplace_back(se.first, id);
  std::sort(order.begin(), order.end());
  std::map<int64_t, int32_t> index;
  for (const auto& [start, id] : order) {
    index[id] = int32_t(trace.steps.size());
    trace.steps.push_back({id, start, extent[id].second - start});
  }
  // Each kernel belongs to the step its row names, even where async steps overlap in time.
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].step_id && kernel_of_row[i] != kNone) trace.kernels[kernel_of_row[i]].step_index = index[*rows[i].step_id];
}

// kernel_details rows → the trace. Without device kernels from trace_view every row is a
// Kernel; with them, rows only fill what trace_view lacks on the matching kernel.
void merge_kernel_details(Trace& trace, std::vector<CsvKernel>& rows, bool had_trace_view) {
  std::vector<uint32_t> kernel_of_row(rows.size(), kNone);
  if (rows.empty()) return;
  if (!had_trace_view) {
    int64_t origin = rows.front().start_abs_ns;
    for (const CsvKernel& r : rows) origin = std::min(origin, r.start_abs_ns);
    trace.time_origin_ns = origin;
    trace.set_env("base_time_ns", std::to_string(origin));
  }
  if (trace.kernels.empty()) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const CsvKernel& r = rows[i];
      Kernel k;
      k.name = trace.intern(r.name);
      k.kind = kind_of_core(r.core);
      k.task_type = trace.intern(r.core);
      k.stream = r.stream;
      k.device = r.device;
      k.start_ns = r.start_abs_ns - trace.time_origin_ns;
      k.dur_ns = r.dur_ns;
      kernel_of_row[i] = uint32_t(trace.kernels.size());
      trace.kernels.push_back(k);
    }
  } else {
    std::vector<std::pair<int64_t, uint32_t>> by_start;  // (start_ns, kernel index)
    by_start.reserve(trace.kernels.size());
    for (uint32_t i = 0; i < trace.kernels.size(); ++i) by_start.emplace_back(trace.kernels[i].start_ns, i);
    std::sort(by_start.begin(), by_start.end());
    std::vector<bool> taken(trace.kernels.size(), false);
    size_t unmatched = 0;
    StrId other = trace.strings.find("Other");
    for (size_t i = 0; i < rows.size(); ++i) {
      const CsvKernel& r = rows[i];
      int64_t s;
      // A row whose start is nowhere near the trace's (or at the edge of int64) matches nothing.
      if (__builtin_sub_overflow(r.start_abs_ns, trace.time_origin_ns, &s) || s < -(int64_t(1) << 62) ||
          s > int64_t(1) << 62) {
        ++unmatched;
        continue;
      }
      StrId name = trace.strings.find(r.name);
      uint32_t best = kNone;
      int64_t best_gap = kMatchToleranceNs + 1;
      if (name != StringPool::kMissing) {
        auto it = std::lower_bound(by_start.begin(), by_start.end(), std::make_pair(s - kMatchToleranceNs, 0u));
        for (; it != by_start.end() && it->first <= s + kMatchToleranceNs; ++it) {
          const Kernel& k = trace.kernels[it->second];
          int64_t gap = std::abs(it->first - s);
          if (!taken[it->second] && k.name == name && gap < best_gap) {
            best = it->second;
            best_gap = gap;
          }
        }
      }
      if (best == kNone) {
        ++unmatched;
        continue;
      }
      taken[best] = true;
      kernel_of_row[i] = best;
      Kernel& k = trace.kernels[best];
      // trace_view often says only "Other": the CSV's Accelerator Core is more precise.
      if (!r.core.empty() && (k.task_type == 0 || k.task_type == other || trace.str(k.task_type) == "N/A")) {
        k.task_type = trace.intern(r.core);
        k.kind = kind_of_core(r.core);
      }
      if (k.stream < 0) k.stream = r.stream;
      if (k.device < 0) k.device = r.device;
    }
    if (unmatched > 0)
      trace.warnings.push_back(
          {fmt::format("kernel_details.csv: {} of {} rows match no trace_view.json kernel (name and start); not "
                       "added, so no task is counted twice",
                       unmatched, rows.size()),
           0});
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].has_detail || kernel_of_row[i] == kNone) continue;
    KernelDetail d = rows[i].detail;
    if (!rows[i].op_state.empty()) d.op_state = trace.intern(rows[i].op_state);
    if (!rows[i].input_dtypes.empty()) d.input_dtypes = trace.intern(rows[i].input_dtypes);
    if (!rows[i].op_type.empty()) d.op_type = trace.intern(rows[i].op_type);
    if (!rows[i].input_shapes.empty()) d.input_shapes = trace.intern(rows[i].input_shapes);
    if (!rows[i].output_shapes.empty()) d.output_shapes = trace.intern(rows[i].output_shapes);
    trace.kernels[kernel_of_row[i]].detail = uint32_t(trace.kernel_details.size());
    trace.kernel_details.push_back(d);
  }
  if (trace.steps.empty()) add_csv_steps(trace, rows, kernel_of_row);
}

}  // namespace

Trace read_ascend(const std::string& path, const ReadOptions& opts) {
  fs::path p(path);
  std::error_code ec;
  if (!fs::exists(p, ec)) throw InputError(path, 0, "no such file or directory", false);

  Trace pre;  // warnings found while locating the files
  if (!fs::is_directory(p, ec)) {
    // A lone kernel_details.csv (any name): kernels and steps only.
    Trace trace;
    std::vector<CsvKernel> rows = read_kernel_details(path, trace.input_bytes);
    merge_kernel_details(trace, rows, false);
    trace.source = path;
    trace.format = InputFormat::AscendCsv;
    trace.caps = ascend_caps(false);
    trace.set_env("device", "npu");
    trace.finalize();
    return trace;
  }

  fs::path dir = locate_output_dir(p, pre);
  fs::path trace_view = dir / "trace_view.json";
  fs::path kernel_details = dir / "kernel_details.csv";
  if (!has_output_files(dir))
    throw InputError(dir.string(), 0,
                     "empty torch_npu profiler output: none of trace_view.json, kernel_details.csv, "
                     "step_trace_time.csv, op_statistic.csv is here (the profiler may not have finished writing)",
                     false);
  bool has_trace_view = present(trace_view);
  bool has_kernels_csv = present(kernel_details);
  Trace trace = has_trace_view ? read_chrome_json(trace_view.string(), opts) : Trace{};
  trace.warnings.insert(trace.warnings.begin(), pre.warnings.begin(), pre.warnings.end());

  if (has_kernels_csv) {
    std::vector<CsvKernel> rows = read_kernel_details(kernel_details.string(), trace.input_bytes);
    merge_kernel_details(trace, rows, has_trace_view);
  }
  if (present(dir / "step_trace_time.csv"))
    read_step_trace_time((dir / "step_trace_time.csv").string(), trace, !has_trace_view);
  if (present(dir / "op_statistic.csv")) read_op_statistic((dir / "op_statistic.csv").string(), trace);
  if (present(dir / "communication.json"))
    trace.comm_step_times = read_rank_communication((dir / "communication.json").string());
  read_communication_detail(dir.string(), has_trace_view, trace);  // docs/communication.md
  if (!has_trace_view && !has_kernels_csv)
    trace.warnings.push_back({fmt::format("{}: no trace_view.json or kernel_details.csv: no events, only aggregate "
                                          "statistics{}",
                                          dir.string(),
                                          trace.step_trace_times.empty()
                                              ? ""
                                              : " (the cluster view takes the step times from step_trace_time.csv)"),
                              0});

  trace.source = path;
  trace.format = InputFormat::AscendDir;
  // An NPU's tasks; trace_view.json adds the AscendCL calls (on torch_npu's task-queue thread).
  trace.caps = ascend_caps(has_trace_view);
  trace.set_env("device", "npu");
  trace.finalize();
  return trace;
}

}  // namespace npud
