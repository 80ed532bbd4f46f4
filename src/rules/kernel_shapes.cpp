#include "rules/kernel_shapes.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/names.hpp"
#include "model/trace.hpp"
#include "util/text.hpp"

namespace npud {

std::optional<std::vector<KernelShape>> parse_kernel_shapes(std::string_view text) {
  std::vector<KernelShape> out;
  size_t start = 0;
  while (true) {
    size_t end = text.find(';', start);
    std::string_view tensor = trim(text.substr(start, end == std::string_view::npos ? text.npos : end - start));
    KernelShape dims;
    size_t s = 0;
    while (!tensor.empty()) {
      size_t c = tensor.find(',', s);
      auto dim = parse_int(tensor.substr(s, c == std::string_view::npos ? tensor.npos : c - s));
      if (!dim || *dim < 0) return std::nullopt;
      dims.push_back(*dim);
      if (c == std::string_view::npos) break;
      s = c + 1;
    }
    out.push_back(std::move(dims));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

const KernelDetail* detail_of(const Trace& t, const Kernel& k) {
  return k.detail < t.kernel_details.size() ? &t.kernel_details[k.detail] : nullptr;
}

std::string distinct_items(std::string_view list) {
  std::vector<std::string_view> seen;
  std::string out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = std::min(list.find(';', start), list.size());
    std::string_view item = trim(list.substr(start, end - start));
    if (!item.empty() && std::find(seen.begin(), seen.end(), item) == seen.end()) {
      seen.push_back(item);
      out += (out.empty() ? "" : ", ") + std::string(item);
    }
    start = end + 1;
  }
  return out;
}

std::string shapes_text(const std::vector<KernelShape>& shapes) {
  std::string out;
  for (const KernelShape& s : shapes) {
    if (s.empty()) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("[{}]", fmt::join(s, ", "));
  }
  return out;
}

std::vector<KernelShapeGroup> group_by_shape(const Trace& t,
                                             const std::function<bool(const Kernel&, const KernelDetail&)>& keep) {
  std::vector<KernelShapeGroup> out;
  std::map<std::tuple<std::string, StrId, StrId>, size_t> index;
  for (const Kernel& k : t.kernels) {
    const KernelDetail* d = detail_of(t, k);
    if (!d || !keep(k, *d)) continue;
    std::string op = normalize_task_name(t.str(k.name));
    auto [it, fresh] = index.try_emplace({op, d->input_shapes, d->output_shapes}, out.size());
    if (fresh) {
      KernelShapeGroup g;
      g.op = std::move(op);
      g.op_type = t.str(d->op_type);
      g.input_shapes = t.str(d->input_shapes);
      g.output_shapes = t.str(d->output_shapes);
      g.dtypes = t.str(d->input_dtypes);
      g.first_name = t.str(k.name);
      out.push_back(std::move(g));
    }
    KernelShapeGroup& g = out[it->second];
    ++g.count;
    g.time_ns += k.dur_ns;
  }
  return out;
}

}  // namespace npud
