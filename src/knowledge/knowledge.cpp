// Parses the knowledge texts (data/knowledge/*, format in docs/knowledge.md) into
// per-version lookup sets. The embedded copy is parsed once, on first use.
#include "knowledge/knowledge.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "knowledge/knowledge_data.hpp"

namespace npud {
namespace {

// An op name as traces, captures and Python spell it, reduced to base and overload.
struct OpName {
  std::string_view base;      // "add"
  std::string_view overload;  // "Tensor"; "" for the default overload
  bool has_overload = false;  // false: the source dropped it ("aten::add" in Kineto)
  std::string full() const {
    return has_overload && !overload.empty() ? fmt::format("{}.{}", base, overload) : std::string(base);
  }
};

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

OpName split_op(std::string_view op) {
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

bool starts_with_overload_of(std::string_view key, std::string_view base) {
  return key.size() > base.size() && key.substr(0, base.size()) == base && key[base.size()] == '.';
}

// Value of `op` in a map keyed by op(.overload); without an overload, the default
// overload's entry, else the lexicographically first overload's (deterministic).
template <class Map>
const typename Map::mapped_type* lookup(const Map& map, std::string_view op) {
  OpName n = split_op(op);
  auto it = map.find(n.full());
  if (it != map.end()) return &it->second;
  if (n.has_overload) return nullptr;
  const typename Map::mapped_type* best = nullptr;
  std::string_view best_key;
  for (const auto& [key, value] : map) {
    if (starts_with_overload_of(key, n.base) && (!best || key < best_key)) {
      best = &value;
      best_key = key;
    }
  }
  return best;
}

bool in_list(const std::unordered_set<std::string>& set, std::string_view op) {
  OpName n = split_op(op);
  if (set.count(n.full())) return true;
  if (n.has_overload) return false;
  for (const auto& key : set)
    if (starts_with_overload_of(key, n.base)) return true;
  return false;
}

struct Line {
  size_t number;
  std::vector<std::string_view> fields;
};

// Data lines of a knowledge file (comments and blank lines skipped), each split on tabs
// and checked for the expected field count.
std::vector<Line> data_lines(std::string_view file, std::string_view text, size_t expected_fields) {
  std::vector<Line> out;
  size_t number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty() || line.front() == '#') continue;
    Line l{number, {}};
    size_t start = 0;
    while (true) {
      size_t tab = line.find('\t', start);
      l.fields.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    if (l.fields.size() != expected_fields)
      throw KnowledgeError(fmt::format("knowledge file {} line {}: expected {} tab-separated fields, got {}", file,
                                       number, expected_fields, l.fields.size()));
    if (l.fields[0].empty())
      throw KnowledgeError(fmt::format("knowledge file {} line {}: empty op name", file, number));
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace

// ---- KnowledgeVersion ----

bool KnowledgeVersion::has_npu_kernel(std::string_view op) const {
  OpName n = split_op(op);
  if (!n.has_overload) return aten_base.count(std::string(n.base)) > 0;
  return aten.count(n.full()) > 0;
}

bool KnowledgeVersion::is_custom(std::string_view name) const {
  OpName n = split_op(name);
  if (!n.has_overload) return custom_base.count(std::string(n.base)) > 0;
  return custom.count(n.full()) > 0;
}

bool KnowledgeVersion::is_tocpu(std::string_view op) const { return in_list(tocpu, op); }
bool KnowledgeVersion::is_unsupported(std::string_view op) const { return in_list(unsupported, op); }

std::string_view KnowledgeVersion::autocast_policy(std::string_view op) const {
  const std::string* p = lookup(autocast, op);
  return p ? std::string_view(*p) : std::string_view{};
}

std::string_view KnowledgeVersion::impl_of(std::string_view op) const {
  const std::string* p = lookup(impl, op);
  return p ? std::string_view(*p) : std::string_view{};
}

// ---- Knowledge ----

const Knowledge& Knowledge::builtin() {
  static const Knowledge k = [] {
    std::vector<std::pair<std::string_view, std::string_view>> files;
    for (const EmbeddedFile& f : embedded_knowledge()) files.emplace_back(f.name, f.bytes);
    return parse_files(files);
  }();
  return k;
}

const KnowledgeVersion* Knowledge::find(std::string_view version) const {
  std::string_view v = trim(version);
  if (!v.empty() && (v.front() == 'v' || v.front() == 'V')) v.remove_prefix(1);
  // Keep the leading "X.Y.Z": drops ".post3", "+cpu", "rc1", "-26.1.0" (release suffixes).
  std::vector<int> parts;
  size_t i = 0;
  while (i < v.size() && parts.size() < 3) {
    int value = 0;
    auto [ptr, ec] = std::from_chars(v.data() + i, v.data() + v.size(), value);
    if (ec != std::errc{}) break;
    parts.push_back(value);
    i = size_t(ptr - v.data());
    if (i < v.size() && v[i] == '.') ++i;
    else break;
  }
  if (parts.size() < 2) return nullptr;
  if (parts.size() == 2 && i < v.size()) return nullptr;  // "2.1x": not a version prefix
  for (const KnowledgeVersion& kv : versions_) {
    std::vector<int> have;
    std::string_view s = kv.version;
    size_t j = 0;
    while (j < s.size()) {
      int value = 0;
      auto [ptr, ec] = std::from_chars(s.data() + j, s.data() + s.size(), value);
      if (ec != std::errc{}) break;
      have.push_back(value);
      j = size_t(ptr - s.data()) + 1;
    }
    if (std::equal(parts.begin(), parts.end(), have.begin(), have.begin() + std::min(have.size(), parts.size())) &&
        have.size() >= parts.size())
      return &kv;  // one version per minor line, so a "2.1" prefix is unambiguous
  }
  return nullptr;
}

bool Knowledge::is_composite(std::string_view op) const {
  OpName n = split_op(op);
  if (n.has_overload) return composite_.count(n.full()) > 0;
  // No overload: the default overload decides when it has a composite kernel at all.
  auto it = composite_kind_.find(std::string(n.base));
  if (it != composite_kind_.end()) return it->second == "implicit";
  auto b = composite_base_kind_.find(std::string(n.base));
  return b != composite_base_kind_.end() && b->second == "implicit";
}

std::string_view Knowledge::composite_kind(std::string_view op) const {
  OpName n = split_op(op);
  auto it = composite_kind_.find(n.full());
  if (it != composite_kind_.end()) return it->second;
  if (n.has_overload) return {};
  auto b = composite_base_kind_.find(std::string(n.base));
  return b != composite_base_kind_.end() ? std::string_view(b->second) : std::string_view{};
}

const DeprecatedOp* Knowledge::deprecated(std::string_view name) const {
  OpName n = split_op(name);
  std::string full = n.full();
  for (const DeprecatedOp& d : deprecated_)
    if (d.op == full) return &d;
  if (n.has_overload) return nullptr;
  for (const DeprecatedOp& d : deprecated_)
    if (starts_with_overload_of(d.op, n.base)) return &d;
  return nullptr;
}

std::string_view Knowledge::custom_schema(std::string_view name) const {
  const std::string* p = lookup(custom_schema_, name);
  return p ? std::string_view(*p) : std::string_view{};
}

Knowledge Knowledge::parse(std::string_view text) {
  static constexpr std::string_view kMarker = "@file ";
  std::vector<std::pair<std::string_view, std::string_view>> files;
  size_t pos = 0, line = 0, body = 0;
  auto close = [&](size_t end) {
    if (!files.empty()) files.back().second = text.substr(body, end - body);
  };
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    size_t next = eol == std::string_view::npos ? text.size() : eol + 1;
    std::string_view l = text.substr(pos, next - pos);
    ++line;
    if (l.substr(0, kMarker.size()) == kMarker) {
      close(pos);
      std::string_view name = trim(l.substr(kMarker.size()));
      if (name.empty()) throw KnowledgeError(fmt::format("knowledge text line {}: '@file' without a name", line));
      files.emplace_back(name, std::string_view{});
      body = next;
    } else if (files.empty() && l.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      throw KnowledgeError(fmt::format("knowledge text line {}: expected '@file <name>' before any content", line));
    }
    pos = next;
  }
  close(text.size());
  return parse_files(files);
}

Knowledge Knowledge::parse_files(std::span<const std::pair<std::string_view, std::string_view>> files) {
  Knowledge k;
  // compat.tsv defines the versions every other file's ranges refer to.
  auto compat = std::find_if(files.begin(), files.end(), [](const auto& f) { return f.first == "compat.tsv"; });
  if (compat == files.end()) throw KnowledgeError("knowledge: compat.tsv is missing (it defines the versions)");
  k.parse_file(compat->first, compat->second);
  for (const auto& [name, text] : files)
    if (name != "compat.tsv") k.parse_file(name, text);
  return k;
}

void Knowledge::parse_file(std::string_view name, std::string_view text) {
  // Expands "1.5.0-2.0.1,2.2.0" to indices into versions_.
  auto expand = [&](std::string_view ranges, size_t line) {
    std::vector<size_t> out;
    auto index = [&](std::string_view v) {
      for (size_t i = 0; i < versions_.size(); ++i)
        if (versions_[i].version == v) return i;
      throw KnowledgeError(fmt::format("knowledge file {} line {}: unknown version '{}' (not in compat.tsv)", name,
                                       line, v));
    };
    while (!ranges.empty()) {
      size_t comma = ranges.find(',');
      std::string_view part = trim(ranges.substr(0, comma));
      ranges = comma == std::string_view::npos ? std::string_view{} : ranges.substr(comma + 1);
      if (part.empty()) throw KnowledgeError(fmt::format("knowledge file {} line {}: empty version range", name, line));
      size_t dash = part.find('-');
      size_t a = index(part.substr(0, dash));
      size_t b = dash == std::string_view::npos ? a : index(part.substr(dash + 1));
      if (b < a)
        throw KnowledgeError(fmt::format("knowledge file {} line {}: reversed version range '{}'", name, line, part));
      for (size_t i = a; i <= b; ++i) out.push_back(i);
    }
    if (out.empty()) throw KnowledgeError(fmt::format("knowledge file {} line {}: no versions", name, line));
    return out;
  };
  auto base_of = [](std::string_view op) { return std::string(op.substr(0, op.find('.'))); };

  if (name == "compat.tsv") {
    if (!versions_.empty()) throw KnowledgeError("knowledge: compat.tsv given twice");
    for (const Line& l : data_lines(name, text, 7)) {
      CompatRow r{std::string(l.fields[0]), std::string(l.fields[1]), std::string(l.fields[2]),
                  std::string(l.fields[3]), std::string(l.fields[4]), std::string(l.fields[5]),
                  std::string(l.fields[6])};
      KnowledgeVersion v;
      v.version = r.torch_npu;
      versions_.push_back(std::move(v));
      compat_.push_back(std::move(r));
    }
    if (versions_.empty()) throw KnowledgeError("knowledge file compat.tsv: no versions");
  } else if (name == "aten-ops.tsv") {
    for (const Line& l : data_lines(name, text, 2))
      for (size_t i : expand(l.fields[1], l.number)) {
        versions_[i].aten.emplace(l.fields[0]);
        versions_[i].aten_base.insert(base_of(l.fields[0]));
      }
  } else if (name == "aten-impl.tsv") {
    for (const Line& l : data_lines(name, text, 3))
      for (size_t i : expand(l.fields[2], l.number)) versions_[i].impl[std::string(l.fields[0])] = l.fields[1];
  } else if (name == "custom-ops.tsv") {
    for (const Line& l : data_lines(name, text, 3)) {
      for (size_t i : expand(l.fields[1], l.number)) {
        versions_[i].custom.emplace(l.fields[0]);
        versions_[i].custom_base.insert(base_of(l.fields[0]));
      }
      custom_schema_[std::string(l.fields[0])] = l.fields[2];
    }
  } else if (name == "tocpu.tsv" || name == "unsupported.tsv") {
    bool tocpu = name == "tocpu.tsv";
    for (const Line& l : data_lines(name, text, 2))
      for (size_t i : expand(l.fields[1], l.number))
        (tocpu ? versions_[i].tocpu : versions_[i].unsupported).emplace(l.fields[0]);
  } else if (name == "autocast.tsv") {
    for (const Line& l : data_lines(name, text, 3))
      for (size_t i : expand(l.fields[2], l.number)) versions_[i].autocast[std::string(l.fields[0])] = l.fields[1];
  } else if (name == "deprecated.tsv") {
    for (const Line& l : data_lines(name, text, 3))
      deprecated_.push_back({std::string(l.fields[0]), std::string(l.fields[1]), std::string(l.fields[2])});
  } else if (name == "composite.tsv") {
    for (const Line& l : data_lines(name, text, 2)) {
      std::string op(l.fields[0]);
      std::string_view kind = l.fields[1];
      if (kind != "implicit" && kind != "explicit" && kind != "explicit_nonfunctional")
        throw KnowledgeError(fmt::format("knowledge file {} line {}: unknown composite kind '{}'", name, l.number, kind));
      if (kind == "implicit") composite_.insert(op);
      composite_kind_[op] = kind;
      // Base-name fallback: an implicit overload wins over explicit ones (file order otherwise).
      auto [it, fresh] = composite_base_kind_.emplace(base_of(op), kind);
      if (!fresh && kind == "implicit") it->second = kind;
    }
  } else if (name == "PROVENANCE") {
    provenance_ = std::string(text);
    while (!provenance_.empty() && provenance_.back() == '\n') provenance_.pop_back();
  }
  // Other names: files a newer generator added; ignoring them keeps old binaries working.
}

}  // namespace npud
