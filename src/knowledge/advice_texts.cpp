#include "knowledge/advice_texts.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "knowledge/knowledge.hpp"
#include "knowledge/library_advice.hpp"
#include "knowledge/tsv.hpp"
#include "util/text.hpp"

namespace npud {

AdviceArg::AdviceArg(std::string_view n, double v) : name(n), value(fmt::format("{}", v)) {}

std::string_view AdviceVersions::of(std::string_view package) const {
  if (package == "torch") return torch;
  if (package == "torch_npu") return torch_npu;
  for (const auto& [name, version] : libraries)
    if (name == package) return version;
  return {};
}

namespace {
bool name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || c == '_' || (!first && c >= '0' && c <= '9');
}
// The placeholder name at text[i] == '{' ("" when that brace is text), and its length with braces.
std::string_view placeholder_at(std::string_view text, size_t i, size_t& length) {
  size_t j = i + 1;
  while (j < text.size() && name_char(text[j], j == i + 1)) ++j;
  if (j == i + 1 || j >= text.size() || text[j] != '}') return {};
  length = j + 1 - i;
  return text.substr(i + 1, j - i - 1);
}
}  // namespace

std::vector<std::string> placeholders_of(std::string_view text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size(); ++i) {
    size_t length = 0;
    std::string_view name = text[i] == '{' ? placeholder_at(text, i, length) : std::string_view{};
    if (name.empty()) continue;
    bool seen = false;
    for (const auto& n : out) seen = seen || n == name;
    if (!seen) out.emplace_back(name);
    i += length - 1;
  }
  return out;
}

std::string fill_placeholders(std::string_view text, std::span<const AdviceArg> args) {
  std::vector<bool> used(args.size(), false);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    size_t length = 0;
    std::string_view name = text[i] == '{' ? placeholder_at(text, i, length) : std::string_view{};
    if (name.empty()) {
      out += text[i];
      continue;
    }
    size_t a = 0;
    while (a < args.size() && args[a].name != name) ++a;
    if (a == args.size()) throw std::logic_error(fmt::format("advice text: no value for {{{}}} in \"{}\"", name, text));
    used[a] = true;
    out += args[a].value;
    i += length - 1;
  }
  for (size_t a = 0; a < args.size(); ++a)
    if (!used[a])
      throw std::logic_error(fmt::format("advice text: no placeholder {{{}}} in \"{}\"", args[a].name, text));
  return out;
}

bool advice_condition_met(std::string_view when, const AdviceVersions& versions) {
  when = trim(when);
  if (when == "*") return true;
  while (!when.empty()) {
    size_t semi = when.find(';');
    std::string_view c = trim(when.substr(0, semi));
    when = semi == std::string_view::npos ? std::string_view{} : when.substr(semi + 1);
    size_t op = c.find_first_of("<>=");
    std::string_view version = versions.of(trim(c.substr(0, op)));
    if (op == std::string_view::npos || version.empty() || !version_in_range(version, c.substr(op))) return false;
  }
  return true;
}

void AdviceTexts::parse(std::string_view file_name, std::string_view text) {
  for (const TsvLine& line : tsv_lines("advice text file", file_name, text, 4)) {
    const std::vector<std::string_view>& f = line.fields;
    if (f[0].empty() || f[1].empty() || f[2].empty() || f[3].empty())
      throw KnowledgeError(fmt::format("advice text file {} line {}: expected a rule, a key, a condition (* for none) "
                                       "and a text",
                                       file_name, line.number));
    rows_.push_back({std::string(file_name), line.number, std::string(f[0]), std::string(f[1]), std::string(f[2]),
                     unescape_field(f[3])});
  }
}

const AdviceRow& AdviceTexts::row(std::string_view rule, std::string_view key, const AdviceVersions& versions) const {
  const AdviceRow* fallback = nullptr;
  for (const AdviceRow& r : rows_) {
    if (r.rule != rule || r.key != key) continue;
    if (r.when == "*") {
      if (!fallback) fallback = &r;
    } else if (advice_condition_met(r.when, versions)) {
      return r;
    }
  }
  if (!fallback) throw std::logic_error(fmt::format("advice text {} {}: no such key in data/texts", rule, key));
  return *fallback;
}

const AdviceTexts& AdviceTexts::builtin() {
  static const AdviceTexts texts = [] {
    AdviceTexts t;
    for (const EmbeddedFile& f : embedded_advice_texts()) t.parse(f.name, f.bytes);
    return t;
  }();
  return texts;
}

std::string advice(std::string_view rule, std::string_view key, std::initializer_list<AdviceArg> args,
                   const AdviceVersions& versions) {
  return fill_placeholders(AdviceTexts::builtin().row(rule, key, versions).text,
                           std::span<const AdviceArg>(args.begin(), args.size()));
}

}  // namespace npud
