// Facts from NPU-FACTS.md that several rules cite: ops that do host or AI-CPU work even
// though torch_npu lists a kernel for them, and APIs that must never be suggested.
#pragma once

#include <string_view>

namespace npud {

// The NPU-FACTS sentence for an aten base name ("scatter_reduce", "argsort", ...), or "".
// `int_input`: argsort/sort only do AI-CPU work on int32/int64 inputs.
std::string_view silent_host_work_fact(std::string_view aten_base, bool int_input);

// Same, matched against a device task name ("ScatterReduce", "Gcd", "IsIn", "Sort"...).
std::string_view silent_task_fact(std::string_view task_name);

}  // namespace npud
