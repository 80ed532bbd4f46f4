#include "rules/layout_support.hpp"

#include "analysis/names.hpp"

namespace npud {

bool is_view_op(std::string_view base) {
  static const std::unordered_map<std::string_view, bool> kViews = {
      {"permute", true}, {"transpose", true}, {"t", true}, {"expand", true}, {"expand_as", true},
      {"narrow", true}, {"slice", true}, {"select", true}, {"as_strided", true}, {"movedim", true},
      {"moveaxis", true}, {"swapaxes", true}, {"swapdims", true}, {"unfold", true}, {"diagonal", true},
      {"view", true}, {"_reshape_alias", true}, {"reshape", true}, {"_unsafe_view", true},
      {"unsqueeze", true}, {"squeeze", true}, {"flatten", true}, {"view_as", true}, {"split", true},
      {"split_with_sizes", true}, {"chunk", true}, {"unbind", true}, {"alias", true}, {"detach", true},
      {"numpy_T", true}, {"mT", true}, {"mH", true}, {"adjoint", true}, {"unflatten", true},
  };
  return kViews.count(base) > 0;
}

const TensorMeta* first_input(const Trace& t, uint32_t op) {
  auto in = t.inputs(t.ops[op]);
  return in.empty() ? nullptr : &t.tensors[in[0]];
}

void TensorProducers::record(const Trace& t, uint32_t op) {
  for (uint32_t r : t.outputs(t.ops[op]))
    if (t.tensors[r].id != kUnset) map_[t.tensors[r].id] = op;
}

uint32_t TensorProducers::of(const TensorMeta& m) const {
  if (m.id == kUnset) return kNone;
  auto it = map_.find(m.id);
  return it == map_.end() ? kNone : it->second;
}

bool strided_on_npu(const Trace& t, const TensorProducers& producers, const TensorMeta& m) {
  uint32_t p = producers.of(m);
  const TensorMeta* cur = &m;
  for (int guard = 0; p != kNone && guard < 64; ++guard) {
    std::string_view base = aten_base(t.str(t.ops[p].name));
    if (is_view_op(base)) return true;
    const TensorMeta* self = first_input(t, p);
    bool in_place = base.ends_with('_') || (self && self->id != kUnset && self->id == cur->id);
    if (!in_place || !self) return false;   // a fresh output on the NPU
    cur = self;
    p = producers.of(*self);
  }
  return true;
}

}  // namespace npud
