// The dispatch facts a trace is judged by: what the capture shim recorded from the torch that
// ran (once per op, docs/formats/capture.md), else the table's column (knowledge/dispatch_facts)
// for the torch the trace names, else for the torch the chosen torch_npu wheel pairs with.
// Reports name which (describe()).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "knowledge/dispatch_facts.hpp"
#include "model/string_pool.hpp"

namespace npud {

class Trace;
struct KnowledgeVersion;

class DispatchView {
 public:
  DispatchView(const Trace& t, const KnowledgeVersion& kv);
  DispatchKind kind(StrId op, bool exact) const;
  const DispatchFacts& table() const;
  size_t column() const { return column_; }
  // "torch 2.13.0+cpu as the capture recorded it", "torch 2.1 (the torch line of torch_npu
  // 2.1.0.post8; the trace does not say which torch ran)".
  const std::string& describe() const { return describe_; }

 private:
  const Trace& t_;
  size_t column_ = 0;
  std::string describe_;
  std::unordered_map<StrId, char> recorded_;
};

}  // namespace npud
