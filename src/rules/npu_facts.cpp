#include "rules/npu_facts.hpp"
#include "analysis/names.hpp"
#include "knowledge/advice_texts.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace npud {
namespace {

struct Fact {
  std::string_view op;        // aten base name; also the key of its text in data/texts/rules.tsv
  std::string_view task;      // lower-case fragment of the device task name
  std::string_view fix_key;
};

constexpr Fact kFacts[] = {
    {"scatter_reduce", "scatterreduce", "scatter_reduce_fix"},
    {"gcd", "gcd", "generic_fix"},
    {"nanmedian", "nanmedian", "nanmedian_fix"},
    {"polar", "polar", "polar_fix"},
    {"sinc", "sinc", "sinc_fix"},
    {"isin", "isin", "isin_fix"},
    {"isneginf", "isneginf", "isneginf_fix"},
    {"isposinf", "isposinf", "isposinf_fix"},
    {"argsort", "argsort", "argsort_fix"},
    {"sort", "sort", "sort_fix"},
};

// A fact's text (data/texts/rules.tsv's NPU-FACTS rows; they live as long as the program).
std::string_view fact_text(std::string_view key) { return AdviceTexts::builtin().row("NPU-FACTS", key).text; }

}  // namespace

HostWorkFact silent_host_work_fact(const OpCallFacts& call) {
  std::string_view base = call.base;
  if (base.ends_with("_")) base.remove_suffix(1);  // in-place variants
  for (const Fact& f : kFacts) {
    if (base != f.op) continue;
    if ((f.op == "argsort" || f.op == "sort") && call.dtype != DType::I64 && call.dtype != DType::I32) break;
    if (f.op == "scatter_reduce" && call.args_known) {
      std::string_view reduce = attribute_value(call.args, "reduce");
      bool sum = reduce == "sum" || reduce == "add";
      if (sum && call.dtype == DType::F32 && attribute_value(call.args, "include_self") != "False") break;
    }
    return {fact_text(f.op), fact_text(f.fix_key)};
  }
  if (call.has_float64) return {fact_text("float64"), fact_text("float64_fix"), true};
  return {};
}

std::string_view silent_task_fact(std::string_view task_name) {
  std::string name = to_lower(task_name);
  for (const Fact& f : kFacts) {
    // Whole-word-ish match on the original spelling: "IsIn" but not "IsInf".
    for (size_t at = name.find(f.task); at != std::string::npos; at = name.find(f.task, at + 1)) {
      size_t next = at + f.task.size();
      if (next >= task_name.size() || !std::islower(static_cast<unsigned char>(task_name[next]))) return fact_text(f.op);
    }
  }
  return {};
}

}  // namespace npud
