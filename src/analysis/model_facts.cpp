#include "analysis/model_facts.hpp"

#include <fmt/format.h>

namespace npud {
namespace {

// Each comma-separated part of `list`.
template <typename F>
void each_part(std::string_view list, char sep, F&& f) {
  while (!list.empty()) {
    size_t end = list.find(sep);
    f(list.substr(0, end));
    if (end == std::string_view::npos) break;
    list.remove_prefix(end + 1);
  }
}

}  // namespace

std::string_view ModelFacts::fact(std::string_view model, std::string_view name) const {
  return t_.env_value(fmt::format("model:{}:{}", model, name));
}

std::string ModelFacts::model_of(std::string_view module_path) const {
  std::string_view best;
  size_t count = 0;
  std::string_view only;
  each_part(t_.env_value("models"), ',', [&](std::string_view p) {
    ++count;
    only = p;
    bool above = module_path == p || (module_path.size() > p.size() && module_path.starts_with(p) &&
                                      module_path[p.size()] == '.');
    if (above && p.size() > best.size()) best = p;
  });
  if (best.empty() && module_path.empty() && count == 1) best = only;
  return std::string(best);
}

FactHolds ModelFacts::holds(std::string_view condition, std::string_view model) const {
  if (model.empty()) return FactHolds::Unknown;
  bool recorded = false, yes = false;
  each_part(condition, '|', [&](std::string_view alt) {
    if (alt.starts_with("config.")) {
      std::string_view fields = fact(model, "config");
      if (fields.empty()) return;
      recorded = true;
      each_part(fields, ',', [&](std::string_view f) { yes = yes || f == alt.substr(7); });
    } else {
      std::string_view v = fact(model, alt);   // a flag the class does not set is not recorded
      recorded = recorded || !v.empty();
      yes = yes || v == "1";
    }
  });
  return yes ? FactHolds::Yes : recorded ? FactHolds::No : FactHolds::Unknown;
}

std::string_view ModelFacts::model_class(std::string_view model) const { return fact(model, "class"); }

}  // namespace npud
