#include "ingest/msprof_cluster.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <simdjson.h>

#include "ingest/communication_json.hpp"
#include "ingest/communication_ops.hpp"
#include "ingest/csv_table.hpp"
#include "ingest/json_error_at.hpp"
#include "ingest/step_trace_table.hpp"

namespace npud {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kOutputName = "cluster_analysis_output";
constexpr std::string_view kStepTable = "cluster_step_trace_time.csv";
constexpr std::string_view kCommunication = "cluster_communication.json";

std::map<std::pair<int64_t, int64_t>, int64_t> wait_by_rank_step(const std::string& path) {
  namespace dom = simdjson::dom;
  std::map<std::pair<int64_t, int64_t>, int64_t> out;
  dom::parser parser;
  simdjson::padded_string text;
  dom::element root = load_json_or_throw(parser, path, text);
  dom::object groups;
  if (root.get_object().get(groups)) throw InputError(path, 0, "expected an object of communication groups", false);
  for_each_cluster_record(groups, [&](std::string_view, std::string_view step_key, std::string_view, int64_t rank,
                                      dom::element info) {
    CommStepTime t;
    if (add_comm_time(info, t)) out[{rank, comm_step_number(step_key)}] += t.wait_ns;
  });
  return out;
}

}  // namespace

std::string find_msprof_cluster_output(const std::string& dir) {
  std::error_code ec;
  fs::path p(dir);
  if (fs::is_regular_file(p / kStepTable, ec)) return p.string();
  if (fs::is_regular_file(p / kOutputName / kStepTable, ec)) return (p / kOutputName).string();
  return {};
}

MsprofClusterOutput read_msprof_cluster_output(const std::string& output_dir) {
  MsprofClusterOutput out;
  out.step_table = (fs::path(output_dir) / kStepTable).string();
  Table t(out.step_table);
  Columns cols(t.header());
  StepTraceColumns step_cols(t, cols);
  int type_col = t.required(cols, {"Type"});
  int index_col = t.required(cols, {"Index"});
  t.required(cols, {"Computing"});
  t.required(cols, {"Communication(Not Overlapped)", "Communication"});
  t.required(cols, {"Free"});

  std::vector<std::string> row;
  while (t.next(row)) {
    if (trim(row[size_t(type_col)]) != "rank") continue;  // "stage" rows aggregate ranks
    auto rank = parse_int(row[size_t(index_col)]);
    if (!rank || *rank < 0) t.fail(size_t(index_col), fmt::format("Index: not a rank number: '{}'", row[size_t(index_col)]));
    out.rank_steps[*rank].push_back(step_cols.read(t, row));
  }
  if (out.rank_steps.empty()) throw InputError(out.step_table, 0, "no 'rank' rows: nothing to report", false);

  const std::string comm_path = (fs::path(output_dir) / kCommunication).string();
  std::error_code ec;
  if (fs::is_regular_file(comm_path, ec)) {
    out.communication = comm_path;
    out.waits = wait_by_rank_step(comm_path);
    read_cluster_comm_ops(comm_path, out.comm);
  }
  return out;
}

}  // namespace npud
