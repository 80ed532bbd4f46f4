#include "knowledge/dispatch_facts.hpp"

#include <charconv>

#include <fmt/format.h>

#include "knowledge/knowledge.hpp"
#include "knowledge/op_name.hpp"
#include "knowledge/tsv.hpp"
#include "util/text.hpp"

namespace npud {

std::string_view to_string(DispatchKind k) {
  switch (k) {
    case DispatchKind::Implicit: return "implicit";
    case DispatchKind::Explicit: return "explicit";
    case DispatchKind::NonFunctional: return "explicit_nonfunctional";
    case DispatchKind::Backend: return "backend";
    default: return "";
  }
}

DispatchKind dispatch_kind_of(char code) {
  switch (code) {
    case 'I': return DispatchKind::Implicit;
    case 'E': return DispatchKind::Explicit;
    case 'N': return DispatchKind::NonFunctional;
    case 'B': return DispatchKind::Backend;
    default: return DispatchKind::Unknown;
  }
}

namespace {

// "2.13.0+cpu" -> {2, 13}; "1.13.0a0" -> {1, 13}; "2.1" -> {2, 1}. {-1, -1} if it does not parse.
std::pair<int, int> minor_of(std::string_view v) {
  v = trim(v);
  if (!v.empty() && (v.front() == 'v' || v.front() == 'V')) v.remove_prefix(1);
  int major = -1, minor = -1;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), major);
  if (ec != std::errc{} || p == v.data() + v.size() || *p != '.') return {-1, -1};
  auto [q, ec2] = std::from_chars(p + 1, v.data() + v.size(), minor);
  if (ec2 != std::errc{} || q == p + 1) return {-1, -1};
  return {major, minor};
}

}  // namespace

void DispatchFacts::parse(std::string_view name, std::string_view text) {
  for (const TextLine& tl : text_lines(text)) {
    const size_t number = tl.number;
    std::string_view line = tl.text;
    if (line.empty()) continue;
    if (line.front() == '#') {
      if (line.starts_with("# torch:")) {
        for (std::string_view rest = trim(line.substr(8)); !rest.empty();) {
          size_t sp = rest.find(' ');
          std::string_view l = rest.substr(0, sp);
          if (minor_of(l).first < 0)
            throw KnowledgeError(fmt::format("knowledge file {} line {}: torch line '{}' is not <major>.<minor>", name,
                                             number, l));
          lines_.emplace_back(l);
          rest = sp == std::string_view::npos ? std::string_view{} : trim(rest.substr(sp + 1));
        }
      }
      continue;
    }
    size_t t1 = line.find('\t');
    size_t t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
    if (t1 == std::string_view::npos || t2 == std::string_view::npos || line.find('\t', t2 + 1) != line.npos)
      throw KnowledgeError(fmt::format("knowledge file {} line {}: expected 3 tab-separated fields", name, number));
    std::string_view op = line.substr(0, t1), codes = line.substr(t1 + 1, t2 - t1 - 1);
    if (lines_.empty())
      throw KnowledgeError(fmt::format("knowledge file {} line {}: data before the '# torch:' line", name, number));
    if (op.empty() || codes.size() != lines_.size() || codes.find_first_not_of(".IENB") != codes.npos)
      throw KnowledgeError(fmt::format("knowledge file {} line {}: expected an op and {} codes of .IENB, got '{}'",
                                       name, number, lines_.size(), codes));
    Row& r = rows_[std::string(op)];
    r.codes = codes;
    r.delegate = line.substr(t2 + 1);
    std::string_view base = op.substr(0, op.find('.'));
    overloads_[std::string(base)].emplace_back(op);
  }
  if (lines_.empty()) throw KnowledgeError(fmt::format("knowledge file {}: no '# torch:' line", name));
}

size_t DispatchFacts::column(std::string_view torch_version) const {
  auto [major, minor] = minor_of(torch_version);
  if (lines_.empty() || major < 0) return std::string_view::npos;
  size_t best = 0;
  for (size_t i = 0; i < lines_.size(); ++i) {
    auto [ma, mi] = minor_of(lines_[i]);
    if (ma < major || (ma == major && mi <= minor)) best = i;   // the newest line not newer than the version
  }
  return best;
}

const DispatchFacts::Row* DispatchFacts::row(std::string_view op, bool exact, size_t column) const {
  OpName n = split_op(op);
  auto it = rows_.find(n.full());
  if (it != rows_.end()) return &it->second;
  if (n.has_overload || exact) return nullptr;
  auto o = overloads_.find(std::string(n.base));
  if (o == overloads_.end()) return nullptr;
  const Row* first = nullptr;
  for (const std::string& name : o->second) {
    const Row& r = rows_.at(name);
    if (!first) first = &r;
    if (code_near(r, column) == 'I') return &r;
  }
  return first;
}

char DispatchFacts::code_near(const Row& r, size_t column) const {
  if (column >= r.codes.size()) column = r.codes.size() - 1;
  if (r.codes[column] != '.') return r.codes[column];
  for (size_t d = 1; d < r.codes.size(); ++d) {
    if (column + d < r.codes.size() && r.codes[column + d] != '.') return r.codes[column + d];
    if (column >= d && r.codes[column - d] != '.') return r.codes[column - d];
  }
  return '.';
}

DispatchKind DispatchFacts::kind(std::string_view op, size_t column, bool exact) const {
  if (lines_.empty()) return DispatchKind::Unknown;
  if (column >= lines_.size()) column = lines_.size() - 1;
  const Row* r = row(op, exact, column);
  return r ? dispatch_kind_of(code_near(*r, column)) : DispatchKind::Unknown;
}

std::string_view DispatchFacts::delegate(std::string_view op) const {
  auto it = rows_.find(split_op(op).full());
  return it == rows_.end() ? std::string_view{} : std::string_view(it->second.delegate);
}

}  // namespace npud
