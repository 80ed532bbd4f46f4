#include "rules/npu_facts.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace npud {
namespace {

struct Fact {
  std::string_view op;        // aten base name
  std::string_view task;      // lower-case fragment of the device task name
  std::string_view text;
};

constexpr Fact kFacts[] = {
    {"scatter_reduce", "scatterreduce",
     "scatter_reduce does host/AI-CPU work on NPU except float32 sum/add with include_self=True"},
    {"gcd", "gcd", "gcd runs on the AI-CPU or host on NPU even though a kernel is listed"},
    {"nanmedian", "nanmedian", "nanmedian runs on the AI-CPU or host on NPU even though a kernel is listed"},
    {"polar", "polar", "polar runs on the AI-CPU or host on NPU even though a kernel is listed"},
    {"sinc", "sinc", "sinc runs on the AI-CPU or host on NPU even though a kernel is listed"},
    {"isin", "isin", "isin runs on the AI-CPU or host on NPU even though a kernel is listed"},
    {"argsort", "argsort", "argsort on int32/int64 inputs runs on the AI-CPU on NPU"},
};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

}  // namespace

std::string_view silent_host_work_fact(std::string_view base, bool int_input) {
  if (base.ends_with("_")) base.remove_suffix(1);  // in-place variants
  for (const Fact& f : kFacts) {
    if (base != f.op) continue;
    if (f.op == "argsort" && !int_input) return {};
    return f.text;
  }
  return {};
}

std::string_view silent_task_fact(std::string_view task_name) {
  std::string name = lower(task_name);
  for (const Fact& f : kFacts) {
    // Whole-word-ish match on the original spelling: "IsIn" but not "IsInf".
    for (size_t at = name.find(f.task); at != std::string::npos; at = name.find(f.task, at + 1)) {
      size_t next = at + f.task.size();
      if (next >= task_name.size() || !std::islower(static_cast<unsigned char>(task_name[next]))) return f.text;
    }
  }
  return {};
}

}  // namespace npud
