#include "cluster/msprof_cluster.hpp"

#include <filesystem>
#include <map>

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

// Per rank and step number, the "Wait Time(ms)" of every collective, in ns. "Total Op Info"
// entries repeat the ops' sums and are skipped.
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

std::vector<RankSummary> read_msprof_cluster(const std::string& output_dir) {
  const std::string table_path = (fs::path(output_dir) / kStepTable).string();
  Table t(table_path);
  Columns cols(t.header());
  StepTraceColumns step_cols(t, cols);
  int type_col = t.required(cols, {"Type"});
  int index_col = t.required(cols, {"Index"});
  t.required(cols, {"Computing"});
  t.required(cols, {"Communication(Not Overlapped)", "Communication"});
  t.required(cols, {"Free"});

  std::map<int64_t, RankSummary> ranks;
  std::vector<std::string> row;
  while (t.next(row)) {
    if (trim(row[size_t(type_col)]) != "rank") continue;  // "stage" rows aggregate ranks
    auto rank = parse_int(row[size_t(index_col)]);
    if (!rank || *rank < 0) t.fail(size_t(index_col), fmt::format("Index: not a rank number: '{}'", row[size_t(index_col)]));
    RankSummary& s = ranks[*rank];
    s.rank = *rank;
    s.source = table_path;
    s.format = "msprof-cluster";
    s.step_source = std::string(kStepTable);
    s.steps.push_back(step_from_step_trace(step_cols.read(t, row)));
  }
  if (ranks.empty()) throw InputError(table_path, 0, "no 'rank' rows: nothing to report", false);

  const std::string comm_path = (fs::path(output_dir) / kCommunication).string();
  std::error_code ec;
  if (fs::is_regular_file(comm_path, ec))
    for (const auto& [key, wait] : wait_by_rank_step(comm_path)) {
      auto it = ranks.find(key.first);
      if (it == ranks.end()) continue;
      auto& steps = it->second.steps;
      // A "step" key without a number belongs to a rank's only step.
      for (StepBreakdown& b : steps)
        if (b.number == key.second || (key.second < 0 && steps.size() == 1)) {
          b.comm_wait_ns = std::max<int64_t>(b.comm_wait_ns, 0) + wait;
          it->second.wait_source = std::string(kCommunication);
        }
    }

  if (fs::is_regular_file(comm_path, ec)) {  // each rank's collectives with their SDMA/RDMA numbers
    Trace comm;
    read_cluster_comm_ops(comm_path, comm);
    for (auto& [r, s] : ranks) s.comm_ops = rank_comm_ops(comm, r);
  }

  std::vector<RankSummary> out;
  for (auto& [r, s] : ranks) {
    s.world_size = int64_t(ranks.size());
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace npud
