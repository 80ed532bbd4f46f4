// The JSON a rank summary and a merged summary share (cluster/rank_summary.cpp,
// cluster/merged_summary.cpp): one rank's fields, a finding without its fix, and field access
// that fails naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "cluster/rank_summary.hpp"
#include "util/json_writer.hpp"

namespace npud {

class SummaryFields {
 public:
  explicit SummaryFields(const std::string& path) : path_(path) {}
  [[noreturn]] void fail(const std::string& what) const;
  int64_t integer(simdjson::dom::object o, std::string_view key, int64_t fallback, bool required = false) const;
  std::string text(simdjson::dom::object o, std::string_view key) const;
  simdjson::dom::array array(simdjson::dom::object o, std::string_view key) const;
  simdjson::dom::object object(simdjson::dom::element e, std::string_view what) const;
  // A non-negative integer below `bound` (an index into a table of that size).
  uint32_t index(simdjson::dom::element e, size_t bound, std::string_view what) const;

 private:
  const std::string& path_;
};

// rank, world_size, source, format, torch_npu, env, step_source, wait_source, steps,
// collectives_truncated, comm_ops, warning_count, warnings (not collectives, not findings).
void write_rank_fields(JsonWriter& w, const RankSummary& s);
void read_rank_fields(const SummaryFields& f, simdjson::dom::object o, RankSummary& s);

// A finding as a summary holds it (no fix text, notes or metrics).
Finding read_summary_finding(const SummaryFields& f, simdjson::dom::element e);

}  // namespace npud
