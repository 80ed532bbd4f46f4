// An aten / npu op name as traces, captures and Python spell it ("aten::add.Tensor",
// "torch.ops.aten.add.Tensor", "aten::add", "npu::npu_rms_norm"), reduced to base and overload.
// Shared by the knowledge tables' lookups.
#pragma once

#include <string>
#include <string_view>

#include "util/text.hpp"

namespace npud {

struct OpName {
  std::string_view base;      // "add"
  std::string_view overload;  // "Tensor"; "" for the default overload
  bool has_overload = false;  // false: the source dropped it ("aten::add" in Kineto)
  std::string full() const { return has_overload && !overload.empty() ? std::string(base) + "." + std::string(overload)
                                                                        : std::string(base); }
};

inline OpName split_op(std::string_view op) {
  op = trim(op);
  static constexpr std::string_view kPrefixes[] = {"torch.ops.aten.", "torch.ops.npu.", "torch_npu.",
                                                   "aten::", "npu::", "aten.", "npu."};
  for (std::string_view p : kPrefixes) {
    if (op.substr(0, p.size()) == p) {
      op.remove_prefix(p.size());
      break;
    }
  }
  OpName n;
  size_t dot = op.find('.');
  if (dot == std::string_view::npos) {
    n.base = op;
    return n;
  }
  n.base = op.substr(0, dot);
  n.overload = op.substr(dot + 1);
  n.has_overload = true;
  if (n.overload == "default") n.overload = {};
  return n;
}

// `key` ("add.Tensor") is an overload of `base` ("add").
inline bool starts_with_overload_of(std::string_view key, std::string_view base) {
  return key.size() > base.size() && key.substr(0, base.size()) == base && key[base.size()] == '.';
}

}  // namespace npud
