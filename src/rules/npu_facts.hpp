// Facts from NPU-FACTS.md and the release data's caveats that several rules cite: ops that
// do host or AI-CPU work even though torch_npu lists a kernel for them, depending on the
// dtype and arguments they get.
#pragma once

#include <string_view>

#include "model/dtype.hpp"

namespace npud {

// What one call of an op looks like, as far as the facts care.
struct OpCallFacts {
  std::string_view base;         // aten base name: "scatter_reduce", "argsort"
  DType dtype = DType::Unknown;  // first tensor input's dtype (Unknown: none recorded)
  std::string_view args;         // recorded string args / flags ("reduce=sum include_self=False"), "" if unknown
  bool args_known = false;       // the source records them (captures); otherwise judge by name only
  bool has_float64 = false;      // a float64 tensor input with more than one element
};

struct HostWorkFact {
  std::string_view text;  // "" when the call is fine
  std::string_view fix;   // the cast or rewrite that keeps it on the AI cores
  bool dtype_wide = false;  // about the data (float64), not one op: every op it touches is one problem
};

// The fact that applies to this call, or {} when none does.
HostWorkFact silent_host_work_fact(const OpCallFacts& call);

// Same, matched against a device task name ("ScatterReduce", "Gcd", "IsIn", "Sort"...).
std::string_view silent_task_fact(std::string_view task_name);

}  // namespace npud
