// Small helpers the rule files share: locations from ops, grouping of events into one
// finding per (what, where), and metric lists.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/trace_index.hpp"
#include "model/finding.hpp"
#include "util/saturate.hpp"

namespace npud {

// file:line (from the op's or an ancestor's user frame), op name and module path. A frame
// inside an installed package is the library site; file:line is then the program's own
// innermost frame that led there (analysis/source_sites.hpp).
Location location_of(const TraceIndex& index, uint32_t op);
// location_of with the op's own module path (location_of names the nearest module around it):
// where a matched expression or optimizer loop ran (FUSE00x).
Location location_with_own_module(const TraceIndex& index, uint32_t op);

// Accumulates events of one kind at one place.
struct EventGroup {
  std::string what;          // "aten::item", "cudaStreamSynchronize"
  Location location;
  std::string context;       // extra text (parent chain), may be empty
  size_t count = 0;
  size_t in_steps = 0;
  size_t in_first_step = 0;  // of in_steps, those in the first step (TraceIndex::per_step)
  int64_t time_ns = 0;
  int64_t self_ns = 0;       // self time of host ops, when the rule tracks it
  int64_t bytes = 0;         // tensor bytes the events touched, when the rule tracks it
  int category = 0;          // rule-specific
  std::vector<std::string> examples;  // a few distinct raw names
  std::vector<std::string> modules;   // distinct module paths seen (add_module), first seen first

  void add(int32_t step_index, int64_t ns) {
    ++count;
    if (step_index >= 0) ++in_steps;
    if (step_index == 0) ++in_first_step;
    add_saturating(time_ns, ns);
  }
  void add_example(std::string_view name, size_t max = 3);
  void add_module(std::string_view path);
};

// "in 4 modules: model.blocks.0.attn, model.blocks.1.attn, ..." for a group seen in several.
std::string modules_note(const EventGroup& g);

// Groups keyed by an arbitrary string, in first-seen order.
class GroupMap {
 public:
  EventGroup& get(const std::string& key, bool* created = nullptr);
  EventGroup* find(const std::string& key);   // nullptr when no group has that key
  std::vector<EventGroup>& groups() { return groups_; }

 private:
  std::vector<EventGroup> groups_;
  std::unordered_map<std::string, size_t> index_;
};

double share(int64_t part, int64_t whole);

// How often per step, worded so that the number cannot mislead (issue 30: "0/step" for a
// sync that costs 15 % of the step, "0.667/step"): "3/step" when TraceIndex::per_step is a
// whole number; otherwise the events it counts and the steps it divides by, "2 in 3 steps";
// "all in start-up step 0" or "none inside a step" when it counts none; "" for a trace
// without steps.
std::string per_step_text(const TraceIndex& index, size_t in_steps, size_t in_first_step);
inline std::string per_step_text(const TraceIndex& index, const EventGroup& g) {
  return per_step_text(index, g.in_steps, g.in_first_step);
}
// The same in parentheses, to follow a count: " (2 in 3 steps)"; "" for a trace without steps.
std::string per_step_note(const TraceIndex& index, size_t in_steps, size_t in_first_step);
inline std::string per_step_note(const TraceIndex& index, const EventGroup& g) {
  return per_step_note(index, g.in_steps, g.in_first_step);
}
// "1 time", "5 times", with per_step_note after it.
std::string times_text(const TraceIndex& index, size_t count, size_t in_steps, size_t in_first_step);

// A finding of `rule` over a group of timed events: at g.location, metrics `count`,
// `per_step`, `time_ns`, `time_share` (of step time, or of the trace span without steps),
// cost_ns = the time. The rule adds severity, message and fix.
Finding timed_finding(const TraceIndex& index, std::string_view rule, const EventGroup& g);

}  // namespace npud
