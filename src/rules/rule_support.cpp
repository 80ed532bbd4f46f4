#include "rules/rule_support.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "knowledge/advice_texts.hpp"

namespace npud {

Location location_of(const TraceIndex& index, uint32_t op) {
  Location loc;
  if (op == kNone) return loc;
  const Trace& t = index.trace();
  loc.op = std::string(t.str(t.ops[op].name));
  uint32_t owner = index.stack_owner(op);
  if (owner != kNone) {
    // Inside an installed package: the package's site is the cause, the program's own
    // innermost frame (the call that led there) is where the user acts. A capture's stack
    // holds both; a Kineto trace gives one frame per python_function event, so the program's
    // frame is an enclosing event's.
    const Frame& inner = t.frames[t.frames_of(t.ops[owner].stack)[0]];
    const Frame* anchor = nullptr;
    PackageSite site = index.sites().site(inner);
    if (!site.package.empty()) {
      loc.library = {site.package, site.version, site.file, site.line, site.function, {}};
      for (uint32_t at = owner; at != kNone && !anchor; at = index.stack_owner(t.ops[at].parent))
        for (uint32_t f : t.frames_of(t.ops[at].stack))
          if (!index.sites().is_package(t.frames[f].file)) {
            anchor = &t.frames[f];
            break;
          }
    }
    if (!anchor) anchor = &inner;
    loc.file = std::string(t.str(anchor->file));
    loc.line = anchor->line;
    loc.enclosing = anchor->enclosing;
  }
  for (uint32_t i = op; i != kNone; i = t.ops[i].parent) {
    if (t.ops[i].module) {
      loc.module = std::string(t.str(t.ops[i].module));
      break;
    }
  }
  return loc;
}

Location location_with_own_module(const TraceIndex& index, uint32_t op_index) {
  Location loc = location_of(index, op_index);
  const Trace& t = index.trace();
  loc.module = std::string(t.str(t.ops[op_index].module));
  return loc;
}

void EventGroup::add_example(std::string_view name, size_t max) {
  if (examples.size() >= max) return;
  if (std::find(examples.begin(), examples.end(), name) == examples.end()) examples.emplace_back(name);
}

void EventGroup::add_module(std::string_view path) {
  // A line runs in as many modules as the model has layers (tens): a linear search is fine.
  if (std::find(modules.begin(), modules.end(), path) == modules.end()) modules.emplace_back(path);
}

std::string modules_note(const EventGroup& g) {
  constexpr size_t kListed = 6;
  std::string modules;
  for (size_t i = 0; i < g.modules.size() && i < kListed; ++i) modules += (i ? ", " : "") + g.modules[i];
  if (g.modules.size() > kListed) modules += fmt::format(" and {} more", g.modules.size() - kListed);
  return advice("common", "modules_note", {{"count", g.modules.size()}, {"modules", modules}});
}

EventGroup& GroupMap::get(const std::string& key, bool* created) {
  auto [it, inserted] = index_.try_emplace(key, groups_.size());
  if (inserted) groups_.emplace_back();
  if (created) *created = inserted;
  return groups_[it->second];
}

EventGroup* GroupMap::find(const std::string& key) {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &groups_[it->second];
}

double share(int64_t part, int64_t whole) { return whole > 0 ? double(part) / double(whole) : 0.0; }

std::string per_step_text(const TraceIndex& index, size_t in_steps, size_t in_first_step) {
  const size_t steps = index.rate_steps();
  if (index.step_count() == 0 || steps == 0) return {};
  // What TraceIndex::per_step divides: a capture's start-up step 0 is left out when later steps exist.
  const bool startup_left_out = steps < index.step_count();
  const size_t counted = in_steps - (startup_left_out ? std::min(in_first_step, in_steps) : 0);
  if (counted == 0) return startup_left_out && in_first_step > 0 ? "all in start-up step 0" : "none inside a step";
  if (counted % steps == 0) return fmt::format("{}/step", counted / steps);
  return fmt::format("{} in {} steps", counted, steps);
}

std::string per_step_note(const TraceIndex& index, size_t in_steps, size_t in_first_step) {
  std::string text = per_step_text(index, in_steps, in_first_step);
  return text.empty() ? text : " (" + text + ")";
}

std::string times_text(const TraceIndex& index, size_t count, size_t in_steps, size_t in_first_step) {
  return fmt::format("{} time{}{}", count, count == 1 ? "" : "s", per_step_note(index, in_steps, in_first_step));
}

Finding timed_finding(const TraceIndex& index, std::string_view rule, const EventGroup& g) {
  Finding f;
  f.rule = std::string(rule);
  f.location = g.location;
  f.metrics = {{"count", double(g.count)},
               {"per_step", index.per_step(g.in_steps, g.in_first_step, g.count)},
               {"time_ns", double(g.time_ns)},
               {"time_share", share(g.time_ns, index.wall_ns())}};
  f.cost_ns = g.time_ns;
  return f;
}

}  // namespace npud
