#include "ingest/communication_json.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "util/input_error.hpp"
#include "ingest/json_error_at.hpp"
#include "util/text.hpp"

namespace npud {

namespace dom = simdjson::dom;

int64_t comm_step_number(std::string_view key) {
  if (!key.starts_with("step")) return -1;
  key.remove_prefix(4);
  return parse_int(key).value_or(-1);
}

bool add_comm_time(dom::element op_info, CommStepTime& into) {
  dom::object info;
  if (op_info["Communication Time Info"].get_object().get(info)) return false;
  auto ms = [&](std::string_view key, int64_t& out) {
    double v = 0;
    if (info[key].get_double().get(v) == simdjson::SUCCESS && std::isfinite(v) && v >= 0 && v < 1e12)
      out += int64_t(std::llround(v * 1e6));
  };
  ms("Wait Time(ms)", into.wait_ns);
  ms("Transit Time(ms)", into.transit_ns);
  ms("Elapse Time(ms)", into.elapse_ns);
  return true;
}

std::vector<CommStepTime> read_rank_communication(const std::string& path) {
  dom::parser parser;
  simdjson::padded_string text;
  dom::element root = load_json_or_throw(parser, path, text);
  dom::object steps;
  if (root.get_object().get(steps))
    throw InputError(path, 0, "expected an object of steps (msprof communication.json)", false);
  std::map<int64_t, CommStepTime> by_step;
  for (auto [step_key, kinds_el] : steps) {
    dom::object kinds;
    if (kinds_el.get_object().get(kinds)) continue;
    CommStepTime& t = by_step[comm_step_number(step_key)];
    t.step_number = comm_step_number(step_key);
    for (auto [kind, ops_el] : kinds) {   // "collective", "p2p"
      dom::object ops;
      if (ops_el.get_object().get(ops)) continue;
      for (auto [op, info] : ops)
        if (op != "Total Op Info") add_comm_time(info, t);
    }
  }
  std::vector<CommStepTime> out;
  for (auto& [step, t] : by_step) out.push_back(t);
  return out;
}

}  // namespace npud
