// Whether an aten op runs on an NPU: the chosen torch_npu wheel's op list (KnowledgeVersion)
// read together with how torch dispatches the op (DispatchFacts). One answer for FALLBACK002
// (profiles, captures) and API101 (scan).
#pragma once

#include <string>
#include <string_view>

#include "knowledge/dispatch_facts.hpp"

namespace npud {

struct KnowledgeVersion;

enum class Coverage {
  Kernel,            // torch_npu has a kernel for it
  Decomposed,        // CompositeImplicitAutograd: torch decomposes it before any backend
  Generic,           // torch's generic kernel runs it as other ops (judged on their own)
  GenericPerTensor,  // a _foreach_ op without its NPU overload: one NPU op per tensor, not fused
  FallsBack,         // no NPU kernel: the CPU fallback (torch >= 2.1) runs it on the host
};

struct CoverageAnswer {
  Coverage coverage = Coverage::FallsBack;
  std::string missing;   // FallsBack of a NonFunctional wrapper: the out overload the NPU lacks
};

// `op` as traces spell it; `exact`: the name keeps its overload (captures). `kind`: how the
// torch that ran dispatches it; `dispatch`: the table, for the kind of a wrapper's out overload
// at the same `column`.
CoverageAnswer npu_coverage(const KnowledgeVersion& kv, std::string_view op, bool exact, DispatchKind kind,
                            const DispatchFacts& dispatch, size_t column);

}  // namespace npud
