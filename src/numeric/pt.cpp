#include "numeric/pt.hpp"

#include <bit>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "util/input_error.hpp"
#include "numeric/stored_zip.hpp"

namespace npud {

namespace {

// data.pkl is parsed in place; a real one is a few bytes per tensor.
constexpr uint64_t kMaxPickleBytes = uint64_t(1) << 30;

[[noreturn]] void refuse_not_zip(std::string_view b, const std::string& name) {
  // torch.save's legacy format is a stream of pickles: a protocol-2 pickle starts 0x80 0x02.
  if (b.size() >= 2 && uint8_t(b[0]) == 0x80 && uint8_t(b[1]) <= 5)
    throw InputError(name, 0, "a legacy torch.save file (torch < 1.6, or _use_new_zipfile_serialization=False): a "
                              "stream of pickles npu-doctor does not read; re-save it with torch >= 1.6's default "
                              "(zip) format");
  if (b.size() >= 262 && b.substr(257, 5) == "ustar")
    throw InputError(name, 0, "a tar archive (torch.save's oldest format), not a torch.save zip archive");
  throw InputError(name, 0, "not a torch.save file (no zip signature PK\\3\\4)");
}

}  // namespace

PtContents parse_pt(std::string_view b, const std::string& name) {
  if (b.size() < 4 || b.substr(0, 4) != std::string_view("PK\x03\x04", 4)) refuse_not_zip(b, name);
  std::vector<ZipEntry> entries = read_zip_directory(b, name);
  if (entries.empty()) throw InputError(name, 0, "an empty zip archive (no data.pkl)");
  // Every record lives under one folder, named after the file when it was saved.
  const std::string& first = entries[0].name;
  size_t slash = first.find('/');
  if (slash == std::string::npos)
    throw InputError(name, entries[0].header_offset, fmt::format("zip entry '{}' is not inside the archive's folder "
                                                                 "(torch.save writes <name>/data.pkl)", first));
  const std::string prefix = first.substr(0, slash + 1);
  std::unordered_map<std::string_view, const ZipEntry*> by_name;
  for (const ZipEntry& e : entries) by_name.emplace(e.name, &e);
  auto entry = [&](const std::string& rel) -> const ZipEntry* {
    auto it = by_name.find(prefix + rel);
    if (it == by_name.end()) return nullptr;
    if (it->second->method != 0)
      throw InputError(name, it->second->header_offset,
                       fmt::format("zip entry '{}' is compressed (method {}); torch.save stores entries uncompressed",
                                   it->second->name, it->second->method));
    return it->second;
  };

  PtContents out;
  if (const ZipEntry* bo = entry("byteorder")) {
    std::string_view order = b.substr(bo->data_offset, bo->size);
    if (order != "little" && order != "big")
      throw InputError(name, bo->data_offset, fmt::format("byteorder is neither 'little' nor 'big' ({} bytes)", bo->size));
    out.byte_swapped = (order == "big") != (std::endian::native == std::endian::big);
  }  // absent: torch < 2.1 wrote none, and stored the machine's order (little on every Ascend host)

  const ZipEntry* pkl = entry("data.pkl");
  if (!pkl) throw InputError(name, 0, fmt::format("no {}data.pkl in the zip archive (not a torch.save file)", prefix),
                             false);
  if (pkl->size > kMaxPickleBytes)
    throw InputError(name, pkl->data_offset, fmt::format("data.pkl holds {} bytes, over the {} byte limit", pkl->size,
                                                         kMaxPickleBytes));
  TorchPickle p = read_torch_pickle(b.substr(pkl->data_offset, pkl->size), name, pkl->data_offset);
  out.other_values = p.other_values;
  for (PickledTensor& t : p.tensors) {
    const ZipEntry* data = entry("data/" + t.storage_key);
    if (!data)
      throw InputError(name, pkl->data_offset + t.at,
                       fmt::format("tensor '{}' names storage '{}', which the archive lacks (no {}data/{})", t.name,
                                   t.storage_key, prefix, t.storage_key));
    if (data->size < t.storage_bytes)
      throw InputError(name, data->data_offset,
                       fmt::format("storage data/{} holds {} bytes, but data.pkl says {} (truncated or edited file)",
                                   t.storage_key, data->size, t.storage_bytes));
    PtTensor pt;
    static_cast<PickledTensor&>(pt) = std::move(t);
    pt.data_offset = data->data_offset + pt.storage_offset * pt.element_bytes;
    out.tensors.push_back(std::move(pt));
  }
  return out;
}

PtContents read_pt_index(const std::string& path) {
  MappedFile f(path);
  return parse_pt(f.bytes(), path);
}

MappedPt::MappedPt(const std::string& path) : file_(path) {
  contents_ = parse_pt(file_.bytes(), path);
  for (size_t i = 0; i < contents_.tensors.size(); ++i) by_name_.emplace(contents_.tensors[i].name, i);
  file_.advise_sequential();
}

size_t MappedPt::find(const std::string& member) const {
  const auto& ts = contents_.tensors;
  if (member.empty()) {
    if (ts.size() == 1) return 0;
    throw InputError(path(), 0, fmt::format("holds {} tensors where one was expected (a dump's .pt file holds one "
                                            "tensor)", ts.size()), false);
  }
  if (auto it = by_name_.find(member); it != by_name_.end()) return it->second;
  throw InputError(path(), 0, fmt::format("holds no tensor named '{}'", member), false);
}

TensorView pt_view(std::string_view file, const PtContents& c, size_t i, std::vector<char>& copy,
                   const std::string& name) {
  const PtTensor& t = c.tensors.at(i);
  if (!t.uncompared_dtype.empty())
    throw InputError(name, t.data_offset, fmt::format("tensor '{}' is {}, a dtype compare does not measure", t.name,
                                                      t.uncompared_dtype));
  TensorView v;
  v.dtype = t.dtype;
  v.byte_swapped = c.byte_swapped;
  v.count = t.count;
  const char* base = file.data() + t.data_offset;
  if (t.contiguous() || t.count == 0) {
    v.data = base;
    return v;
  }
  const uint64_t es = dtype_size(t.dtype);
  const uint64_t limit = (uint64_t(1) << 30) + 4 * uint64_t(file.size());
  uint64_t bytes;
  if (__builtin_mul_overflow(t.count, es, &bytes) || bytes > limit)
    throw InputError(name, t.data_offset,
                     fmt::format("tensor '{}' is a strided view of {} elements over {} storage bytes: gathering it "
                                 "needs over {} bytes, the limit (1 GiB + 4x the file); save it contiguous "
                                 "(.contiguous()) to compare it", t.name, t.count, t.span_bytes, limit));
  copy.resize(size_t(bytes));
  // Odometer over every dimension but the last; the last is copied element by element.
  const size_t nd = t.shape.size();
  std::vector<int64_t> idx(nd, 0);
  const int64_t inner = t.shape[nd - 1], inner_stride = t.stride[nd - 1];
  char* out = copy.data();
  for (uint64_t done = 0; done < t.count; done += uint64_t(inner)) {
    int64_t off = 0;
    for (size_t d = 0; d + 1 < nd; ++d) off += idx[d] * t.stride[d];
    for (int64_t k = 0; k < inner; ++k, out += es) std::memcpy(out, base + uint64_t(off + k * inner_stride) * es, es);
    for (size_t d = nd - 1; d-- > 0;) {
      if (++idx[d] < t.shape[d]) break;
      idx[d] = 0;
    }
  }
  v.data = copy.data();
  return v;
}

TensorView MappedPt::view(size_t i, std::vector<char>& copy) const {
  return pt_view(file_.bytes(), contents_, i, copy, path());
}

}  // namespace npud
