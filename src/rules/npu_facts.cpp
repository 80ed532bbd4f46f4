#include "rules/npu_facts.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace npud {
namespace {

struct Fact {
  std::string_view op;        // aten base name
  std::string_view task;      // lower-case fragment of the device task name
  std::string_view text;
  std::string_view fix;
};

constexpr std::string_view kGenericFix =
    "Keep it out of the hot loop, or express it with ops that have AI-core kernels.";

constexpr Fact kFacts[] = {
    {"scatter_reduce", "scatterreduce",
     "scatter_reduce does host/AI-CPU work on NPU except float32 sum/add with include_self=True",
     "Use float32 values with reduce=\"sum\" and include_self=True (or index_add_ / scatter_add_), which run on "
     "the AI cores; for amax/amin/prod/mean keep it out of the step."},
    {"gcd", "gcd", "gcd runs on the AI-CPU or host on NPU even though a kernel is listed", kGenericFix},
    {"nanmedian", "nanmedian", "nanmedian runs on the AI-CPU or host on NPU even though a kernel is listed",
     "Use median on data without NaN (or torch.where(isnan) to mask first), or keep it out of the step."},
    {"polar", "polar", "polar runs on the AI-CPU or host on NPU even though a kernel is listed",
     "Build the real and imaginary parts with abs*cos and abs*sin instead of torch.polar."},
    {"sinc", "sinc", "sinc runs on the AI-CPU or host on NPU even though a kernel is listed",
     "Compute sin(pi*x)/(pi*x) with a torch.where for x == 0."},
    {"isin", "isin", "isin runs on the AI-CPU or host on NPU even though a kernel is listed",
     "For a small set compare and reduce: (x.unsqueeze(-1) == values).any(-1); for a large one, a lookup table."},
    {"isneginf", "isneginf", "isneginf computes on the host on NPU even though isneginf.out is listed",
     "Compare instead: x == float(\"-inf\")."},
    {"isposinf", "isposinf", "isposinf computes on the host on NPU even though isposinf.out is listed",
     "Compare instead: x == float(\"inf\")."},
    {"argsort", "argsort", "argsort on int32/int64 inputs runs on the AI-CPU on NPU",
     "Sort float keys: x.float().argsort() (exact for integers below 2**24)."},
    {"sort", "sort", "sort on int32/int64 inputs runs on the AI-CPU on NPU",
     "Sort float keys: x.float().sort() (exact for integers below 2**24), then cast back."},
};

constexpr std::string_view kFloat64Text =
    "float64 has no AI-core kernels on NPU: the op runs on the AI-CPU (slow) or raises";
constexpr std::string_view kFloat64Fix =
    "Keep device tensors in float32 (or bf16/fp16): create them with dtype=torch.float32, call .float() on "
    "float64 data (numpy arrays are float64 by default) before the step, and keep float64 for host-side math.";

// "reduce=sum include_self=False" -> value of `key`, or "".
std::string_view arg_value(std::string_view args, std::string_view key) {
  for (size_t at = args.find(key); at != std::string_view::npos; at = args.find(key, at + 1)) {
    if ((at == 0 || args[at - 1] == ' ') && args.substr(at + key.size(), 1) == "=") {
      std::string_view v = args.substr(at + key.size() + 1);
      return v.substr(0, v.find(' '));
    }
  }
  return {};
}


}  // namespace

HostWorkFact silent_host_work_fact(const OpCallFacts& call) {
  std::string_view base = call.base;
  if (base.ends_with("_")) base.remove_suffix(1);  // in-place variants
  for (const Fact& f : kFacts) {
    if (base != f.op) continue;
    if ((f.op == "argsort" || f.op == "sort") && call.dtype != DType::I64 && call.dtype != DType::I32) break;
    if (f.op == "scatter_reduce" && call.args_known) {
      std::string_view reduce = arg_value(call.args, "reduce");
      bool sum = reduce == "sum" || reduce == "add";
      if (sum && call.dtype == DType::F32 && arg_value(call.args, "include_self") != "False") break;
    }
    return {f.text, f.fix};
  }
  if (call.has_float64) return {kFloat64Text, kFloat64Fix, true};
  return {};
}

std::string_view silent_task_fact(std::string_view task_name) {
  std::string name = to_lower(task_name);
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
