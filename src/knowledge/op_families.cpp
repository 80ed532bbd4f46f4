#include "knowledge/op_families.hpp"

#include <array>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include "util/embedded.hpp"

namespace npud {

std::span<const EmbeddedFile> embedded_op_families();

namespace {

constexpr std::array<std::string_view, 3> kFamilyNames = {"undefined_output", "value_copy", "value_fill"};

// The embedded file's rows, one set per family (views into the embedded bytes, which live as
// long as the program). A family the file lacks, or one it has that the enum lacks, is a
// build of mismatched sources: thrown at first use (OpFamilies unit tests read every family).
struct Families {
  std::array<std::unordered_set<std::string_view>, kFamilyNames.size()> sets;
  Families() {
    std::string_view text = find_embedded(embedded_op_families(), "op-families.tsv");
    std::array<bool, kFamilyNames.size()> seen{};
    while (!text.empty()) {
      size_t end = text.find('\n');
      std::string_view line = text.substr(0, end);
      text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
      if (line.empty() || line.front() == '#') continue;
      size_t tab = line.find('\t');
      size_t f = 0;
      while (f < kFamilyNames.size() && kFamilyNames[f] != line.substr(0, tab)) ++f;
      if (tab == std::string_view::npos || f == kFamilyNames.size())
        throw std::logic_error("op-families.tsv: unknown family in line: " + std::string(line));
      seen[f] = true;
      std::string_view ops = line.substr(tab + 1);
      for (size_t at = 0; at < ops.size();) {
        size_t sp = ops.find(' ', at);
        if (sp == std::string_view::npos) sp = ops.size();
        if (sp > at) sets[f].insert(ops.substr(at, sp - at));
        at = sp + 1;
      }
    }
    for (size_t f = 0; f < seen.size(); ++f)
      if (!seen[f]) throw std::logic_error("op-families.tsv: no row for " + std::string(kFamilyNames[f]));
  }
};

}  // namespace

bool in_op_family(OpFamily family, std::string_view base) {
  static const Families families;
  return families.sets[size_t(family)].contains(base);
}

}  // namespace npud
