#include "cluster/rank_summary.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>
#include <simdjson.h>

#include "analysis/trace_index.hpp"
#include "ingest/byte_source.hpp"
#include "util/input_error.hpp"
#include "ingest/json_error_at.hpp"
#include "report/finding_json.hpp"
#include "util/json_writer.hpp"
#include "util/text.hpp"
#include "util/directory.hpp"
#include "cluster/summary_fields.hpp"

namespace npud {

namespace {

constexpr std::string_view kKind = kRankSummaryKind;
constexpr size_t kWarningsKept = 5;

}  // namespace

int64_t rank_in_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // A run directory, or the ASCEND_PROFILER_OUTPUT inside one.
  if (fs::is_directory(path, ec))
    for (const fs::path& dir : {fs::path(path), fs::path(path).parent_path()})
      for (const auto& e : directory_entries(dir, ec)) {
        std::string n = e.path().filename().string();
        if (n.starts_with("profiler_info_") && n.ends_with(".json"))
          if (auto r = parse_int(std::string_view(n).substr(14, n.size() - 19))) return *r;
      }
  std::string name = to_lower(fs::path(path).filename().string());
  for (size_t at = name.find("rank"); at != std::string::npos; at = name.find("rank", at + 1)) {
    size_t i = at + 4;
    if (i < name.size() && (name[i] == '-' || name[i] == '_')) ++i;
    size_t j = i;
    while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
    if (j > i) return parse_int(std::string_view(name).substr(i, j - i)).value_or(-1);
  }
  return -1;
}

std::vector<RankCommOp> rank_comm_ops(const Trace& trace, int64_t rank) {
  std::vector<RankCommOp> out;
  for (const CommOp& op : trace.comm_ops) {
    if (op.rank != rank) continue;
    RankCommOp r;
    r.group = std::string(trace.str(op.group));
    r.name = std::string(trace.str(op.name));
    r.step_number = op.step_number;
    r.elapse_ms = op.elapse_ms;
    if (const CommTransport* tr = trace.transport(op, "SDMA")) r.sdma_mb = tr->size_mb, r.sdma_ms = tr->time_ms, r.sdma_gbs = tr->bandwidth_gbs;
    if (const CommTransport* tr = trace.transport(op, "RDMA")) r.rdma_mb = tr->size_mb, r.rdma_ms = tr->time_ms, r.rdma_gbs = tr->bandwidth_gbs;
    out.push_back(std::move(r));
  }
  return out;
}

Trace comm_trace(const std::vector<const RankSummary*>& ranks) {
  Trace t;
  for (const RankSummary* rs : ranks) {
    const RankSummary& s = *rs;
    if (s.rank < 0 || s.rank > (int64_t(1) << 30)) continue;
    for (const RankCommOp& r : s.comm_ops) {
      CommOp op;
      op.name = t.intern(r.name);
      op.group = t.intern(r.group);
      op.rank = int32_t(s.rank);
      op.step_number = r.step_number;
      op.elapse_ms = r.elapse_ms;
      op.transports_begin = uint32_t(t.comm_transports.size());
      auto add = [&](std::string_view type, double mb, double ms, double gbs) {
        if (mb < 0) return;
        CommTransport tr;
        tr.type = t.intern(type);
        tr.size_mb = mb, tr.time_ms = ms, tr.bandwidth_gbs = gbs;
        tr.sizes_begin = uint32_t(t.comm_packet_sizes.size());
        t.comm_transports.push_back(tr);
      };
      add("SDMA", r.sdma_mb, r.sdma_ms, r.sdma_gbs);
      add("RDMA", r.rdma_mb, r.rdma_ms, r.rdma_gbs);
      op.transports_count = uint32_t(t.comm_transports.size() - op.transports_begin);
      t.comm_ops.push_back(op);
    }
  }
  return t;
}

RankSummary summarize_rank(const Trace& trace, std::vector<Finding> findings, std::string torch_npu) {
  RankSummary s;
  s.source = trace.source;
  s.format = std::string(to_string(trace.format));
  s.torch_npu = std::move(torch_npu);
  s.rank = parse_int(trace.env_value("rank")).value_or(rank_in_path(trace.source));
  s.world_size = parse_int(trace.env_value("world_size")).value_or(0);
  for (const auto& kv : trace.env)
    if (kv.first != "rank" && kv.first != "world_size") s.env.push_back(kv);

  // The profiler's step table when the reader kept it (no trace_view.json), else the steps
  // measured from the trace's events.
  if (trace.step_trace_times.empty()) {
    s.steps = step_breakdowns(trace);
    s.step_source = std::string(kStepsFromTrace);
  } else {
    for (const StepTraceTime& row : trace.step_trace_times) s.steps.push_back(step_from_step_trace(row));
    s.step_source = "step_trace_time.csv";
  }
  // Waits msprof measured (torch_npu communication.json): by step number, or the one step.
  for (const CommStepTime& c : trace.comm_step_times)
    for (StepBreakdown& b : s.steps)
      if (b.number == c.step_number || (c.step_number < 0 && s.steps.size() == 1)) {
        b.comm_wait_ns = std::max<int64_t>(b.comm_wait_ns, 0) + c.wait_ns;
        s.wait_source = "communication.json";
      }
  s.comm_ops = rank_comm_ops(trace);
  // Collectives in time order, each with its step's number.
  std::unordered_map<std::string_view, uint32_t> name_index, group_index;
  for (const Kernel& k : trace.kernels) {
    if (!is_busy_task(k) || k.kind != TaskKind::Communication) continue;
    if (s.collectives.size() >= kMaxCollectives) {
      s.collectives_truncated = true;
      break;
    }
    int64_t step_number = -1;
    if (!trace.steps.empty()) {
      if (k.step_index < 0 || size_t(k.step_index) >= trace.steps.size()) continue;
      step_number = trace.steps[size_t(k.step_index)].number;
    }
    auto [it, fresh] = name_index.try_emplace(trace.str(k.name), uint32_t(s.collective_names.size()));
    if (fresh) s.collective_names.emplace_back(trace.str(k.name));
    uint32_t group = kNoGroup;
    if (k.group) {
      auto [g, new_group] = group_index.try_emplace(trace.str(k.group), uint32_t(s.group_names.size()));
      if (new_group) s.group_names.emplace_back(trace.str(k.group));
      group = g->second;
    }
    s.collectives.push_back({it->second, group, step_number, k.dur_ns});
  }

  for (Finding& f : findings) {   // what the cluster view compares: no fix text, notes or metrics
    f.fix.clear();
    f.notes.clear();
    f.metrics.clear();
  }
  s.findings = std::move(findings);
  s.warning_count = trace.warnings.size();
  for (size_t i = 0; i < trace.warnings.size() && i < kWarningsKept; ++i) s.warnings.push_back(trace.warnings[i].message);
  return s;
}

void write_rank_fields(JsonWriter& w, const RankSummary& s) {
  w.field("rank", s.rank).field("world_size", s.world_size);
  w.field("source", s.source).field("format", s.format).field("torch_npu", s.torch_npu);
  w.key("env").begin_object();
  for (const auto& [k, v] : s.env) w.field(k, v);
  w.end_object();
  w.field("step_source", s.step_source);
  if (!s.wait_source.empty()) w.field("wait_source", s.wait_source);
  w.key("steps").begin_array();
  for (const StepBreakdown& b : s.steps) {
    w.begin_object();
    w.field("step", b.number).field("step_ns", b.step_ns).field("computing_ns", b.computing_ns);
    w.field("communication_ns", b.communication_ns).field("overlapped_ns", b.overlapped_ns).field("free_ns", b.free_ns);
    if (b.comm_wait_ns >= 0) w.field("comm_wait_ns", b.comm_wait_ns);
    if (b.stage_ns >= 0) w.field("stage_ns", b.stage_ns);
    if (b.bubble_ns >= 0) w.field("bubble_ns", b.bubble_ns);
    w.end_object();
  }
  w.end_array();
  w.field("collectives_truncated", s.collectives_truncated);
  if (!s.comm_ops.empty()) {  // HCCL bandwidth records only: other summaries stay as they were
    // [group, name, step, elapse ms, SDMA MB, ms, GB/s, RDMA MB, ms, GB/s] (MB -1: no record)
    w.key("comm_ops").begin_array();
    for (const RankCommOp& c : s.comm_ops)
      w.begin_array().value(c.group).value(c.name).value(c.step_number).value(c.elapse_ms).value(c.sdma_mb).value(c.sdma_ms)
          .value(c.sdma_gbs).value(c.rdma_mb).value(c.rdma_ms).value(c.rdma_gbs).end_array();
    w.end_array();
  }
  w.field("warning_count", uint64_t(s.warning_count));
  w.key("warnings").begin_array();
  for (const auto& m : s.warnings) w.value(m);
  w.end_array();
}

void write_rank_summary(std::ostream& os, const RankSummary& s) {
  JsonWriter w(os, 0);
  w.begin_object();
  tool_header(w, "summary");
  w.field("kind", kKind);
  write_rank_fields(w, s);
  w.key("collective_names").begin_array();
  for (const auto& n : s.collective_names) w.value(n);
  w.end_array();
  if (!s.group_names.empty()) {   // only when the trace records process groups
    w.key("group_names").begin_array();
    for (const auto& n : s.group_names) w.value(n);
    w.end_array();
  }
  // [name index, step, duration ns(, group index)] per collective: the bulk of a summary, so
  // no keys; the group only when the trace records it.
  w.key("collectives").begin_array();
  for (const Collective& c : s.collectives) {
    w.begin_array().value(int64_t(c.name)).value(c.step_number).value(c.dur_ns);
    if (c.group != kNoGroup) w.value(int64_t(c.group));
    w.end_array();
  }
  w.end_array();
  write_findings(w, "findings", s.findings, FindingAliases::Yes);
  w.end_object();
  os << "\n";
}

namespace dom = simdjson::dom;

void SummaryFields::fail(const std::string& what) const { throw InputError(path_, 0, what, false); }

int64_t SummaryFields::integer(dom::object o, std::string_view key, int64_t fallback, bool required) const {
  int64_t v;
  auto e = o[key];
  if (e.error() == simdjson::NO_SUCH_FIELD || (!required && e.is_null())) {
    if (required) fail(fmt::format("rank summary lacks \"{}\"", key));
    return fallback;
  }
  if (e.get_int64().get(v) != simdjson::SUCCESS) fail(fmt::format("\"{}\" is not an integer", key));
  return v;
}

std::string SummaryFields::text(dom::object o, std::string_view key) const {
  std::string_view v;
  auto e = o[key];
  if (e.error() == simdjson::NO_SUCH_FIELD || e.is_null()) return {};
  if (e.get_string().get(v) != simdjson::SUCCESS) fail(fmt::format("\"{}\" is not a string", key));
  return std::string(v);
}

dom::array SummaryFields::array(dom::object o, std::string_view key) const {
  dom::array a;
  if (o[key].get_array().get(a) != simdjson::SUCCESS) fail(fmt::format("\"{}\" is missing or not an array", key));
  return a;
}

dom::object SummaryFields::object(dom::element e, std::string_view what) const {
  dom::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) fail(fmt::format("{} is not an object", what));
  return o;
}

uint32_t SummaryFields::index(dom::element e, size_t bound, std::string_view what) const {
  int64_t v;
  if (e.get_int64().get(v) != simdjson::SUCCESS || v < 0 || uint64_t(v) >= bound)
    fail(fmt::format("{} is not an index below {}", what, bound));
  return uint32_t(v);
}

void read_rank_fields(const SummaryFields& f, dom::object o, RankSummary& s) {
  s.rank = f.integer(o, "rank", -1);
  s.source = f.text(o, "source");
  if (std::string failed = f.text(o, "failed"); !failed.empty()) {   // the rank's summary run failed
    s.failed = failed;
    return;
  }
  s.world_size = f.integer(o, "world_size", 0);
  s.format = f.text(o, "format");
  s.torch_npu = f.text(o, "torch_npu");
  s.step_source = f.text(o, "step_source");
  if (s.step_source.empty()) s.step_source = std::string(kStepsFromTrace);  // written before step_source existed
  s.wait_source = f.text(o, "wait_source");
  dom::object env;
  if (o["env"].get_object().get(env) == simdjson::SUCCESS)
    for (auto [k, v] : env) {
      std::string_view sv;
      if (v.get_string().get(sv) == simdjson::SUCCESS) s.env.emplace_back(std::string(k), std::string(sv));
    }
  for (dom::element e : f.array(o, "steps")) {
    dom::object so = f.object(e, "a step");
    StepBreakdown b;
    b.number = f.integer(so, "step", -1, true);
    b.step_ns = f.integer(so, "step_ns", 0, true);
    b.computing_ns = f.integer(so, "computing_ns", 0, true);
    b.communication_ns = f.integer(so, "communication_ns", 0, true);
    b.overlapped_ns = f.integer(so, "overlapped_ns", 0);
    b.free_ns = f.integer(so, "free_ns", 0, true);
    b.comm_wait_ns = f.integer(so, "comm_wait_ns", -1);
    b.stage_ns = f.integer(so, "stage_ns", -1);
    b.bubble_ns = f.integer(so, "bubble_ns", -1);
    s.steps.push_back(b);
  }
  bool truncated = false;
  if (o["collectives_truncated"].get_bool().get(truncated) == simdjson::SUCCESS) s.collectives_truncated = truncated;
  dom::array comm;
  if (o["comm_ops"].get_array().get(comm) == simdjson::SUCCESS)
    for (dom::element e : comm) {
      dom::array a;
      RankCommOp c;
      std::string_view group, name;
      double v[7];
      bool ok = e.get_array().get(a) == simdjson::SUCCESS && a.size() == 10 &&
                a.at(0).get_string().get(group) == simdjson::SUCCESS && a.at(1).get_string().get(name) == simdjson::SUCCESS &&
                a.at(2).get_int64().get(c.step_number) == simdjson::SUCCESS;
      for (size_t i = 0; ok && i < 7; ++i) ok = a.at(3 + i).get_double().get(v[i]) == simdjson::SUCCESS && std::isfinite(v[i]);
      if (!ok) f.fail("a comm_ops entry is not [group, name, step, elapse, SDMA MB, ms, GB/s, RDMA MB, ms, GB/s]");
      c.group = group, c.name = name;
      c.elapse_ms = v[0], c.sdma_mb = v[1], c.sdma_ms = v[2], c.sdma_gbs = v[3], c.rdma_mb = v[4], c.rdma_ms = v[5], c.rdma_gbs = v[6];
      s.comm_ops.push_back(std::move(c));
    }
  s.warning_count = size_t(std::max<int64_t>(0, f.integer(o, "warning_count", 0)));
  dom::array warnings;
  if (o["warnings"].get_array().get(warnings) == simdjson::SUCCESS)
    for (dom::element e : warnings) {
      std::string_view m;
      if (e.get_string().get(m) == simdjson::SUCCESS) s.warnings.emplace_back(m);
    }
}

Finding read_summary_finding(const SummaryFields& f, dom::element e) {
  dom::object fo = f.object(e, "a finding");
  Finding fd;
  // "id" and "location" (every command's shape); summaries of older versions: "rule", flat keys
  fd.rule = f.text(fo, "id");
  if (fd.rule.empty()) fd.rule = f.text(fo, "rule");
  auto sev = parse_severity(f.text(fo, "severity"));
  if (fd.rule.empty() || !sev) f.fail("a finding lacks its id or severity");
  fd.severity = *sev;
  fd.message = f.text(fo, "message");
  dom::object where = fo;
  if (dom::element loc; fo["location"].get(loc) == simdjson::SUCCESS) where = f.object(loc, "a finding's location");
  fd.location.file = f.text(where, "file");
  fd.location.line = int(f.integer(where, "line", 0));
  fd.location.op = f.text(where, "op");
  fd.cost_ns = f.integer(fo, "cost_ns", 0);
  return fd;
}

RankSummary read_rank_summary(const std::string& path) {
  simdjson::padded_string text;
  dom::parser parser;
  dom::element root = load_json_or_throw(parser, path, text);
  SummaryFields f(path);
  dom::object o = f.object(root, "the document");
  if (f.text(o, "kind") != kKind) f.fail(fmt::format("not a rank summary (no \"kind\": \"{}\"; write one with `npu-doctor analyze TRACE --format summary`)", kKind));
  RankSummary s;
  read_rank_fields(f, o, s);
  if (!s.failed.empty()) return s;
  for (dom::element e : f.array(o, "collective_names")) {
    std::string_view n;
    if (e.get_string().get(n) != simdjson::SUCCESS) f.fail("a collective name is not a string");
    s.collective_names.emplace_back(n);
  }
  dom::array groups;
  if (o["group_names"].get_array().get(groups) == simdjson::SUCCESS)
    for (dom::element e : groups) {
      std::string_view n;
      if (e.get_string().get(n) != simdjson::SUCCESS) f.fail("a process group name is not a string");
      s.group_names.emplace_back(n);
    }
  for (dom::element e : f.array(o, "collectives")) {
    dom::array t;
    int64_t step, dur;
    if (e.get_array().get(t) != simdjson::SUCCESS || (t.size() != 3 && t.size() != 4) || t.at(1).get_int64().get(step) ||
        t.at(2).get_int64().get(dur))
      f.fail("a collective is not [name index, step, duration ns(, group index)]");
    Collective c{f.index(t.at(0), s.collective_names.size(), "a collective's name index"), kNoGroup, step, dur};
    if (t.size() == 4) c.group = f.index(t.at(3), s.group_names.size(), "a collective's group index");
    s.collectives.push_back(c);
  }
  for (dom::element e : f.array(o, "findings")) s.findings.push_back(read_summary_finding(f, e));
  return s;
}

RankSummary failed_rank(int64_t rank, std::string source, std::string error) {
  RankSummary s;
  s.rank = rank;
  s.source = std::move(source);
  s.failed = std::move(error);
  return s;
}

void write_failed_rank_summary(std::ostream& os, int64_t rank, const std::string& source, const std::string& error) {
  JsonWriter w(os, 0);
  w.begin_object();
  w.field("kind", kKind).field("rank", rank).field("source", source).field("failed", error);
  w.end_object();
  os << "\n";
}

int64_t rank_in_file_name(std::string_view path) {
  std::string name = to_lower(path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1));
  size_t at = name.find("rank");
  if (at == std::string::npos) return -1;
  at += 4;
  while (at < name.size() && (name[at] == '-' || name[at] == '_' || name[at] == '.')) ++at;
  size_t end = at;
  while (end < name.size() && end - at < 9 && name[end] >= '0' && name[end] <= '9') ++end;
  return end == at ? -1 : std::stoll(name.substr(at, end - at));
}

SummaryKind summary_kind_of(const std::string& path) {
  char head[512];
  size_t got = 0;
  try {
    std::unique_ptr<ByteSource> in = open_byte_source(path);   // a .json.gz summary too
    for (size_t n; got < sizeof head && (n = in->read(head + got, sizeof head - got)) > 0;) got += n;
  } catch (const InputError&) {
    return SummaryKind::None;   // unreadable or corrupt: reading it says why, if it is ever named
  }
  std::string_view text(head, got);
  if (text.find(kKind) != std::string_view::npos) return SummaryKind::Rank;
  return text.find(kMergedSummaryKind) != std::string_view::npos ? SummaryKind::Merged : SummaryKind::None;
}

}  // namespace npud
