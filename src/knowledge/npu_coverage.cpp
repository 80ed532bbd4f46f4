#include "knowledge/npu_coverage.hpp"

#include "knowledge/knowledge.hpp"
#include "knowledge/op_name.hpp"

namespace npud {

CoverageAnswer npu_coverage(const KnowledgeVersion& kv, std::string_view op, bool exact, DispatchKind kind,
                            const DispatchFacts& dispatch, size_t column) {
  if (exact ? kv.has_npu_kernel_exact(op) : kv.has_npu_kernel(op)) return {Coverage::Kernel, {}};
  OpName n = split_op(op);
  switch (kind) {
    case DispatchKind::Implicit: return {Coverage::Decomposed, {}};
    case DispatchKind::Explicit:
      return {n.base.starts_with("_foreach_") ? Coverage::GenericPerTensor : Coverage::Generic, {}};
    case DispatchKind::NonFunctional: {
      // A functional wrapper of a structured op (isin.Tensor_Tensor): it only redispatches to
      // its out overload, which must run on the NPU, unless that one is generic itself.
      std::string out(dispatch.delegate(n.full()));
      if (out.empty()) out = n.has_overload && !n.overload.empty() ? n.full() + "_out" : std::string(n.base) + ".out";
      if (kv.has_npu_kernel_exact(out)) return {Coverage::Kernel, {}};
      DispatchKind out_kind = dispatch.kind(out, column, true);
      if (out_kind == DispatchKind::Explicit || out_kind == DispatchKind::Implicit) return {Coverage::Generic, {}};
      if (out_kind == DispatchKind::Unknown) {   // not in the table: generic unless some torch_npu ever had it
        bool a_backend_op = false;
        for (const KnowledgeVersion& v : Knowledge::builtin().versions())
          a_backend_op = a_backend_op || v.list().aten.count(out) > 0;
        if (!a_backend_op) return {Coverage::Generic, {}};
      }
      return {Coverage::FallsBack, out};
    }
    default: return {Coverage::FallsBack, {}};
  }
}

}  // namespace npud
