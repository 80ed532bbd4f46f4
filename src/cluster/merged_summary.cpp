#include "cluster/merged_summary.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <simdjson.h>

#include "cluster/summary_fields.hpp"
#include "ingest/json_error_at.hpp"
#include "report/finding_json.hpp"
#include "util/json_writer.hpp"

namespace npud {

void write_merged_summary(std::ostream& os, const ClusterInput& in, const std::string& source) {
  JsonWriter w(os, 0);
  w.begin_object();
  tool_header(w, "summary");
  w.field("kind", kMergedSummaryKind).field("source", source);
  auto strings = [&w](std::string_view key, const std::vector<std::string>& v) {
    w.key(key).begin_array();
    for (const auto& s : v) w.value(s);
    w.end_array();
  };
  strings("collective_names", in.collective_names);
  strings("group_names", in.group_names);
  // [group index (-1: none), name index, step, ordinal, shortest duration ns] per key
  w.key("keys").begin_array();
  for (size_t i = 0; i < in.keys.size(); ++i) {
    const CollectiveKey& k = in.keys[i];
    w.begin_array().value(k.group == kNoGroup ? int64_t(-1) : int64_t(k.group)).value(int64_t(k.name));
    w.value(k.step_number).value(int64_t(k.ordinal)).value(in.shortest_ns[i]).end_array();
  }
  w.end_array();
  w.key("patterns").begin_array();
  for (const auto& p : in.patterns) {
    w.begin_array();
    for (uint32_t k : p) w.value(int64_t(k));
    w.end_array();
  }
  w.end_array();
  std::vector<Finding> findings;
  w.key("finding_ranks").begin_array();
  for (const FindingEntry& e : in.findings) {
    w.value(e.rank);
    findings.push_back(e.finding);
  }
  w.end_array();
  write_findings(w, "findings", findings, FindingAliases::No);
  strings("notes", in.notes);
  w.key("ranks").begin_array();
  for (const MergedRank& m : in.ranks) {
    w.begin_object();
    if (!m.summary.failed.empty()) {
      w.field("rank", m.summary.rank).field("source", m.summary.source).field("failed", m.summary.failed).end_object();
      continue;
    }
    write_rank_fields(w, m.summary);
    w.key("collective_ns").begin_array();
    for (const auto& [step, ns] : m.collective_ns) w.begin_array().value(step).value(ns).end_array();
    w.end_array();
    w.key("patterns").begin_array();
    for (uint32_t p : m.patterns) w.value(int64_t(p));
    w.end_array();
    w.key("findings").begin_array();
    for (uint32_t f : m.finding_ids) w.value(int64_t(f));
    w.end_array();
    w.field("finding_count", uint64_t(m.finding_count)).end_object();
  }
  w.end_array();
  w.end_object();
  os << "\n";
}

namespace {

namespace dom = simdjson::dom;

int64_t integer_at(const SummaryFields& f, dom::array a, size_t i, std::string_view what) {
  int64_t v;
  if (a.at(i).get_int64().get(v) != simdjson::SUCCESS) f.fail(fmt::format("{} is not an integer", what));
  return v;
}

}  // namespace

void read_merged_summary(const std::string& path, ClusterInput& into) {
  simdjson::padded_string text;
  dom::parser parser;
  dom::element root = load_json_or_throw(parser, path, text);
  SummaryFields f(path);
  dom::object o = f.object(root, "the document");
  if (f.text(o, "kind") != kMergedSummaryKind)
    f.fail(fmt::format("not a merged summary (no \"kind\": \"{}\")", kMergedSummaryKind));
  ClusterInput in;
  auto strings = [&](std::string_view key, std::vector<std::string>& out) {
    for (dom::element e : f.array(o, key)) {
      std::string_view s;
      if (e.get_string().get(s) != simdjson::SUCCESS) f.fail(fmt::format("an entry of \"{}\" is not a string", key));
      out.emplace_back(s);
    }
  };
  strings("collective_names", in.collective_names);
  strings("group_names", in.group_names);
  for (dom::element e : f.array(o, "keys")) {
    dom::array a;
    if (e.get_array().get(a) != simdjson::SUCCESS || a.size() != 5)
      f.fail("a key is not [group index, name index, step, ordinal, shortest ns]");
    CollectiveKey k;
    int64_t group = integer_at(f, a, 0, "a key's group");
    k.group = group == -1 ? kNoGroup : f.index(a.at(0), in.group_names.size(), "a key's group index");
    k.name = f.index(a.at(1), in.collective_names.size(), "a key's name index");
    k.step_number = integer_at(f, a, 2, "a key's step");
    k.ordinal = f.index(a.at(3), UINT32_MAX, "a key's ordinal");
    in.keys.push_back(k);
    in.shortest_ns.push_back(integer_at(f, a, 4, "a key's shortest duration"));
  }
  for (dom::element e : f.array(o, "patterns")) {
    dom::array a;
    if (e.get_array().get(a) != simdjson::SUCCESS) f.fail("a pattern is not an array of key indices");
    std::vector<uint32_t> p;
    for (dom::element k : a) p.push_back(f.index(k, in.keys.size(), "a pattern's key index"));
    in.patterns.push_back(std::move(p));
  }
  std::vector<int64_t> owners;
  for (dom::element e : f.array(o, "finding_ranks")) {
    int64_t r;
    if (e.get_int64().get(r) != simdjson::SUCCESS) f.fail("a finding's rank is not an integer");
    owners.push_back(r);
  }
  for (dom::element e : f.array(o, "findings")) {
    if (in.findings.size() >= owners.size()) f.fail("more findings than finding_ranks");
    in.findings.push_back({read_summary_finding(f, e), owners[in.findings.size()]});
  }
  if (in.findings.size() != owners.size()) f.fail("fewer findings than finding_ranks");
  strings("notes", in.notes);
  for (dom::element e : f.array(o, "ranks")) {
    dom::object ro = f.object(e, "a rank");
    MergedRank m;
    read_rank_fields(f, ro, m.summary);
    if (m.summary.failed.empty()) {
      for (dom::element c : f.array(ro, "collective_ns")) {
        dom::array a;
        if (c.get_array().get(a) != simdjson::SUCCESS || a.size() != 2) f.fail("a collective_ns entry is not [step, ns]");
        m.collective_ns.emplace_back(integer_at(f, a, 0, "a collective_ns step"), integer_at(f, a, 1, "a collective_ns sum"));
      }
      std::sort(m.collective_ns.begin(), m.collective_ns.end());
      for (dom::element p : f.array(ro, "patterns")) m.patterns.push_back(f.index(p, in.patterns.size(), "a rank's pattern index"));
      for (dom::element i : f.array(ro, "findings"))
        m.finding_ids.push_back(f.index(i, in.findings.size(), "a rank's finding index"));
      m.finding_count = size_t(std::max<int64_t>(0, f.integer(ro, "finding_count", 0)));
    }
    in.ranks.push_back(std::move(m));
  }
  into.add(std::move(in));   // folded key by key: `in` needs no index of its own
}

}  // namespace npud
