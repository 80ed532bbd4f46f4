// Parses the knowledge texts (data/knowledge/*, format in docs/knowledge.md) into
// per-version lookup sets. The embedded copy is parsed on first use: its versions, lines and
// autocast lists at once, each op list when a version of it is first asked for.
#include "knowledge/knowledge.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <charconv>
#include <mutex>

#include <fmt/format.h>

#include "knowledge/knowledge_data.hpp"
#include "knowledge/op_name.hpp"
#include "knowledge/tsv.hpp"

namespace npud {
namespace {

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

using Line = TsvLine;

// Data lines of a knowledge file, checked for the expected field count and an op name.
std::vector<Line> data_lines(std::string_view file, std::string_view text, size_t expected_fields) {
  std::vector<Line> out = tsv_lines("knowledge file", file, text, expected_fields);
  for (const Line& l : out)
    if (l.fields[0].empty())
      throw KnowledgeError(fmt::format("knowledge file {} line {}: empty op name", file, l.number));
  return out;
}

}  // namespace

// ---- OpList / OpLists / KnowledgeVersion ----

namespace {
std::string base_of(std::string_view op) { return std::string(op.substr(0, op.find('.'))); }

// Whether a row's list ranges ("1-4,7") hold list `id` (1-based) of `count`; a malformed
// range throws, naming the file and line, whichever list is being built.
bool ranges_hold(std::string_view ranges, size_t id, size_t count, std::string_view file, size_t line) {
  auto number = [&](std::string_view v) {
    size_t n = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc{} || ptr != v.data() + v.size() || n == 0 || n > count)
      throw KnowledgeError(fmt::format("knowledge file {} line {}: unknown list id '{}' (wheels.tsv has 1-{})", file,
                                       line, v, count));
    return n;
  };
  bool any = false, held = false;
  while (!ranges.empty()) {
    size_t comma = ranges.find(',');
    std::string_view part = trim(ranges.substr(0, comma));
    ranges = comma == std::string_view::npos ? std::string_view{} : ranges.substr(comma + 1);
    if (part.empty()) throw KnowledgeError(fmt::format("knowledge file {} line {}: empty range", file, line));
    size_t dash = part.find('-');   // ids contain no '-': the first one separates the ends
    size_t a = number(part.substr(0, dash));
    size_t b = dash == std::string_view::npos ? a : number(part.substr(dash + 1));
    if (b < a) throw KnowledgeError(fmt::format("knowledge file {} line {}: reversed range '{}'", file, line, part));
    any = true;
    held = held || (a <= id && id <= b);
  }
  if (!any) throw KnowledgeError(fmt::format("knowledge file {} line {}: no lists", file, line));
  return held;
}

}  // namespace

class OpLists {
 public:
  explicit OpLists(size_t count) : count_(count), slots_(std::make_unique<Slot[]>(count)) {}

  size_t count() const { return count_; }
  // A list file's text (aten-ops.tsv, aten-impl.tsv, custom-ops.tsv, tocpu.tsv, unsupported.tsv).
  void set_text(std::string_view name, std::string_view text) { texts_.emplace_back(name, text); }

  const OpList& get(size_t index) const {
    Slot& s = slots_[index];
    std::call_once(s.once, [&] { build(index + 1, s.list); });
    return s.list;
  }

  // List `index` as given, not built from texts (KnowledgeVersion::set_list).
  void preset(size_t index, OpList list) {
    std::call_once(slots_[index].once, [&] { slots_[index].list = std::move(list); });
  }

  const std::unordered_map<std::string, std::string>& custom_schema() const {
    std::call_once(schema_once_, [&] {
      for (const auto& [name, text] : texts_)
        if (name == "custom-ops.tsv")
          for (const Line& l : data_lines(name, text, 3)) custom_schema_[std::string(l.fields[0])] = l.fields[2];
    });
    return custom_schema_;
  }

 private:
  struct Slot {
    std::once_flag once;
    OpList list;
  };

  // The rows of every list file that name list `id`.
  void build(size_t id, OpList& out) const {
    for (const auto& [name, text] : texts_) {
      if (name == "aten-ops.tsv") {
        for (const Line& l : data_lines(name, text, 2))
          if (ranges_hold(l.fields[1], id, count_, name, l.number)) out.add_aten(l.fields[0]);
      } else if (name == "aten-impl.tsv") {
        for (const Line& l : data_lines(name, text, 3))
          if (ranges_hold(l.fields[2], id, count_, name, l.number)) out.impl[std::string(l.fields[0])] = l.fields[1];
      } else if (name == "custom-ops.tsv") {
        for (const Line& l : data_lines(name, text, 3))
          if (ranges_hold(l.fields[1], id, count_, name, l.number)) out.add_custom(l.fields[0]);
      } else if (name == "tocpu.tsv" || name == "unsupported.tsv") {
        auto& set = name == "tocpu.tsv" ? out.tocpu : out.unsupported;
        for (const Line& l : data_lines(name, text, 2))
          if (ranges_hold(l.fields[1], id, count_, name, l.number)) set.emplace(l.fields[0]);
      }
    }
  }

  size_t count_;
  std::unique_ptr<Slot[]> slots_;
  std::vector<std::pair<std::string, std::string>> texts_;   // owned: parse() callers' text may go
  mutable std::once_flag schema_once_;
  mutable std::unordered_map<std::string, std::string> custom_schema_;
};

const OpList& KnowledgeVersion::list() const {
  static const OpList none;   // a version no Knowledge made and no set_list gave: no ops
  return op_lists && list_id ? op_lists->get(list_id - 1) : none;
}

void KnowledgeVersion::set_list(OpList ops) {
  auto lists = std::make_shared<OpLists>(1);
  lists->preset(0, std::move(ops));
  op_lists = std::move(lists);
  list_id = 1;
}

void OpList::add_aten(std::string_view op) {
  aten.emplace(op);
  aten_base.insert(base_of(op));
}

void OpList::add_custom(std::string_view op) {
  custom.emplace(op);
  custom_base.insert(base_of(op));
}

std::string KnowledgeVersion::source() const {
  std::string opp = op_plugin_commit.empty() ? "" : fmt::format(", op-plugin {}", op_plugin_commit);
  if (kind == "release") return fmt::format("release tag {}{}", ref, opp);
  if (kind == "branch-tip") return fmt::format("tip of release branch {}{}", ref, opp);
  if (kind == "source-build") return fmt::format("source build of {}{}", ref, opp);
  return fmt::format("development tip of {}{}; no released wheel", ref, opp);
}

std::string KnowledgeVersion::describe() const { return fmt::format("torch_npu {} ({})", version, source()); }

bool KnowledgeVersion::has_npu_kernel(std::string_view op) const {
  OpName n = split_op(op);
  if (!n.has_overload) return list().aten_base.count(std::string(n.base)) > 0;
  return list().aten.count(n.full()) > 0;
}

bool KnowledgeVersion::has_npu_kernel_exact(std::string_view op) const {
  return list().aten.count(split_op(op).full()) > 0;
}

bool KnowledgeVersion::is_custom(std::string_view name) const {
  OpName n = split_op(name);
  if (!n.has_overload) return list().custom_base.count(std::string(n.base)) > 0;
  return list().custom.count(n.full()) > 0;
}

bool KnowledgeVersion::is_tocpu(std::string_view op) const { return in_list(list().tocpu, op); }
bool KnowledgeVersion::is_unsupported(std::string_view op) const { return in_list(list().unsupported, op); }

std::string_view KnowledgeVersion::autocast_policy(std::string_view op) const {
  const std::string* p = lookup(*autocast_policies, op);
  return p ? std::string_view(*p) : std::string_view{};
}

std::string_view KnowledgeVersion::impl_of(std::string_view op) const {
  const std::string* p = lookup(list().impl, op);
  return p ? std::string_view(*p) : std::string_view{};
}

// ---- Knowledge ----

const Knowledge& Knowledge::builtin() {
  // Never destroyed: freeing hundreds of thousands of set nodes at exit cost as much as building
  // them (issue 44: ~20 ms of every analyze), and the process ends right after.
  static const Knowledge& k = *new Knowledge([] {
    std::vector<std::pair<std::string_view, std::string_view>> files;
    for (const EmbeddedFile& f : embedded_knowledge()) files.emplace_back(f.name, f.bytes);
    return parse_files(files, /*lazy=*/true);
  }());
  return k;
}

const KnowledgeVersion& Knowledge::newest() const {
  for (auto it = versions_.rbegin(); it != versions_.rend(); ++it)
    if (it->kind == "release") return *it;
  return versions_.back();
}

namespace {

// "2.1" -> "2.1.", "2.1.0" stays: a line prefix that cannot match "2.10.0".
bool same_line(std::string_view line, std::string_view prefix) {
  if (prefix.size() > line.size() || line.substr(0, prefix.size()) != prefix) return false;
  return prefix.size() == line.size() || line[prefix.size()] == '.';
}

bool is_line_spelling(std::string_view v) {  // "2.1" or "2.1.0": digits and at most two dots
  int dots = 0;
  for (char c : v) {
    if (c == '.') ++dots;
    else if (c < '0' || c > '9') return false;
  }
  return !v.empty() && dots >= 1 && dots <= 2 && v.front() != '.' && v.back() != '.' && v.find("..") == v.npos;
}

}  // namespace

const KnowledgeVersion* Knowledge::find(std::string_view version) const {
  std::string_view v = trim(version);
  if (!v.empty() && (v.front() == 'v' || v.front() == 'V')) v.remove_prefix(1);
  for (int pass = 0; pass < 2; ++pass) {
    for (const KnowledgeVersion& kv : versions_) {
      if (kv.version == v) return &kv;
      for (const std::string& alias : kv.aliases)
        if (std::string_view(alias).substr(alias.starts_with('v') ? 1 : 0) == v) return &kv;
    }
    // A local version label ("+git1fa937a", "+cpu") names a build of the same wheel version.
    size_t plus = v.find('+');
    if (plus == std::string_view::npos) break;
    v = v.substr(0, plus);
  }
  if (!is_line_spelling(v)) return nullptr;
  // A bare line: the release named exactly like the line (its first final release), else
  // the line's development tip. "2.1" is the line 2.1.0 when exactly one line matches.
  const std::string* line = nullptr;
  for (const std::string& l : lines_)
    if (same_line(l, v)) {
      if (line) return nullptr;  // ambiguous prefix
      line = &l;
    }
  if (!line) return nullptr;
  const KnowledgeVersion* dev = nullptr;
  for (const KnowledgeVersion& kv : versions_) {
    if (kv.torch != *line) continue;
    if (kv.version == *line && kv.kind == "release") return &kv;
    if (kv.kind == "dev-tip") dev = &kv;
  }
  return dev;
}

std::string Knowledge::known_names(std::string_view version) const {
  std::string_view v = trim(version);
  if (!v.empty() && (v.front() == 'v' || v.front() == 'V')) v.remove_prefix(1);
  std::string line;
  for (const std::string& l : lines_)
    if (v.substr(0, l.size()) == l && (v.size() == l.size() || v[l.size()] == '.' || v[l.size()] == '-' ||
                                       v[l.size()] == '+'))
      line = l;
  std::string out;
  for (const KnowledgeVersion& kv : versions_)
    if (line.empty() ? kv.kind == "dev-tip" || kv.version == kv.torch : kv.torch == line)
      out += (out.empty() ? "" : ", ") + kv.version;
  return out;
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
  const std::string* p = lookup(op_lists_->custom_schema(), name);
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

Knowledge Knowledge::parse_files(std::span<const std::pair<std::string_view, std::string_view>> files, bool lazy) {
  Knowledge k;
  // wheels.tsv defines the versions, the lists and the lines every other file refers to.
  auto wheels = std::find_if(files.begin(), files.end(), [](const auto& f) { return f.first == "wheels.tsv"; });
  if (wheels == files.end()) throw KnowledgeError("knowledge: wheels.tsv is missing (it defines the versions)");
  k.parse_file(wheels->first, wheels->second);
  for (const auto& [name, text] : files)
    if (name != "wheels.tsv") k.parse_file(name, text);
  for (KnowledgeVersion& v : k.versions_) v.op_lists = k.op_lists_;
  if (!lazy) {   // every row read now: a malformed one throws here, not at first use
    for (size_t i = 0; i < k.op_lists_->count(); ++i) k.op_lists_->get(i);
    k.op_lists_->custom_schema();
  }
  return k;
}

void Knowledge::parse_file(std::string_view name, std::string_view text) {
  // Expands "2.1.0-2.12.0,2.14.0" (torch lines) to 0-based indices of lines_.
  auto expand_lines = [&](std::string_view ranges, size_t line) {
    std::vector<size_t> out;
    auto index = [&](std::string_view v) -> size_t {
      for (size_t i = 0; i < lines_.size(); ++i)
        if (lines_[i] == v) return i;
      throw KnowledgeError(fmt::format("knowledge file {} line {}: unknown torch line '{}' (not in wheels.tsv)",
                                       name, line, v));
    };
    while (!ranges.empty()) {
      size_t comma = ranges.find(',');
      std::string_view part = trim(ranges.substr(0, comma));
      ranges = comma == std::string_view::npos ? std::string_view{} : ranges.substr(comma + 1);
      if (part.empty()) throw KnowledgeError(fmt::format("knowledge file {} line {}: empty range", name, line));
      // Lines contain no '-': the first '-' separates the ends.
      size_t dash = part.find('-');
      size_t a = index(part.substr(0, dash));
      size_t b = dash == std::string_view::npos ? a : index(part.substr(dash + 1));
      if (b < a) throw KnowledgeError(fmt::format("knowledge file {} line {}: reversed range '{}'", name, line, part));
      for (size_t i = a; i <= b; ++i) out.push_back(i);
    }
    if (out.empty()) throw KnowledgeError(fmt::format("knowledge file {} line {}: no lists", name, line));
    return out;
  };

  if (name == "wheels.tsv") {
    if (!versions_.empty()) throw KnowledgeError("knowledge: wheels.tsv given twice");
    size_t lists = 0;   // list ids so far: each row's is one of them or the next
    for (const Line& l : data_lines(name, text, 10)) {
      KnowledgeVersion v;
      v.version = l.fields[0];
      v.torch = l.fields[1];
      v.kind = l.fields[2];
      if (v.kind != "release" && v.kind != "branch-tip" && v.kind != "source-build" && v.kind != "dev-tip")
        throw KnowledgeError(fmt::format("knowledge file {} line {}: unknown kind '{}'", name, l.number, v.kind));
      v.ref = l.fields[3];
      v.torch_npu_commit = l.fields[4];
      v.op_plugin_commit = l.fields[5];
      v.op_plugin_date = l.fields[6];
      v.cann = l.fields[7];
      auto [ptr, ec] = std::from_chars(l.fields[8].data(), l.fields[8].data() + l.fields[8].size(), v.list_id);
      if (ec != std::errc{} || v.list_id == 0 || v.list_id > lists + 1)
        throw KnowledgeError(fmt::format("knowledge file {} line {}: list id '{}' is not the next or a known one", name,
                                         l.number, l.fields[8]));
      lists = std::max<size_t>(lists, v.list_id);
      for (std::string_view rest = l.fields[9]; !rest.empty();) {
        size_t comma = rest.find(',');
        v.aliases.emplace_back(trim(rest.substr(0, comma)));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      }
      if (lines_.empty() || lines_.back() != v.torch) {
        lines_.push_back(v.torch);
        line_autocast_.push_back(std::make_shared<AutocastPolicies>());
      }
      v.autocast_policies = line_autocast_.back();
      versions_.push_back(std::move(v));
    }
    if (versions_.empty()) throw KnowledgeError("knowledge file wheels.tsv: no versions");
    op_lists_ = std::make_shared<OpLists>(lists);
  } else if (name == "aten-ops.tsv" || name == "aten-impl.tsv" || name == "custom-ops.tsv" || name == "tocpu.tsv" ||
             name == "unsupported.tsv") {
    op_lists_->set_text(name, text);   // read per list, when a version of it is first asked for
  } else if (name == "autocast.tsv") {
    for (const Line& l : data_lines(name, text, 3))
      for (size_t i : expand_lines(l.fields[2], l.number)) (*line_autocast_[i])[std::string(l.fields[0])] = l.fields[1];
  } else if (name == "deprecated.tsv") {
    for (const Line& l : data_lines(name, text, 3))
      deprecated_.push_back({std::string(l.fields[0]), std::string(l.fields[1]), std::string(l.fields[2])});
  } else if (name == "dispatch.tsv") {
    dispatch_.parse(name, text);
  } else if (name == "PROVENANCE") {
    provenance_ = std::string(text);
    while (!provenance_.empty() && provenance_.back() == '\n') provenance_.pop_back();
  }
  // Other names: files a newer generator added; ignoring them keeps old binaries working.
}

}  // namespace npud
