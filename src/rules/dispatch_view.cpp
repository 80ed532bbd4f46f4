#include "rules/dispatch_view.hpp"

#include <fmt/format.h>

#include "knowledge/knowledge.hpp"
#include "model/trace.hpp"

namespace npud {

DispatchView::DispatchView(const Trace& t, const KnowledgeVersion& kv) : t_(t) {
  for (const OpDispatch& d : t.op_dispatch)
    if (d.kind) recorded_[d.op] = d.kind;
  const DispatchFacts& facts = table();
  std::string_view torch = t.env_value("torch");
  size_t column = torch.empty() ? std::string_view::npos : facts.column(torch);
  if (column != std::string_view::npos) {
    column_ = column;
    describe_ = recorded_.empty() ? fmt::format("torch {} (the torch that ran; table column {})", torch,
                                                facts.lines()[column])
                                  : fmt::format("torch {} as the capture recorded it", torch);
  } else {
    column = facts.column(kv.torch);
    column_ = column == std::string_view::npos ? 0 : column;
    describe_ = facts.lines().empty()
                    ? std::string("none (no dispatch table)")
                    : fmt::format("torch {} (the torch line of torch_npu {}; the trace does not say which torch ran)",
                                  facts.lines()[column_], kv.version);
  }
}

const DispatchFacts& DispatchView::table() const { return Knowledge::builtin().dispatch(); }

DispatchKind DispatchView::kind(StrId op, bool exact) const {
  if (auto it = recorded_.find(op); it != recorded_.end()) return dispatch_kind_of(it->second);
  return table().kind(t_.str(op), column_, exact);
}

}  // namespace npud
