// The texts findings say: fixes and notes, keyed by rule and case, in data/texts/*.tsv
// (compiled in; docs/knowledge.md "Advice texts"). A rule asks for its text by key and fills
// its placeholders:
//
//   f.fix = advice("AMP004", "fix", {{"init_scale", scale}});
//   f.notes.push_back(advice("AMP003", "overflow_note"));
//
// A row may hold a version condition ("torch>=2.1", "torch_npu<2.1;transformers>=4.46"): the
// first row of the key whose condition the given versions meet is used, else the key's
// unconditional row ("*", which every key has). The capture shim reads data/texts/shim.tsv
// the same way (python/npu_doctor/_advice.py). AdviceTexts.* renders every row and checks
// that each key is used and each call fills exactly the placeholders of its text.
#pragma once

#include <concepts>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/embedded.hpp"

namespace npud {

// One placeholder's value: `{name}` in the text. Numbers are written as fmt's "{}" does; a
// format spec ("{:.2f}") is the caller's: pass the formatted string.
struct AdviceArg {
  std::string_view name;
  std::string value;
  AdviceArg(std::string_view n, std::string_view v) : name(n), value(v) {}
  AdviceArg(std::string_view n, const std::string& v) : name(n), value(v) {}
  AdviceArg(std::string_view n, const char* v) : name(n), value(v) {}
  AdviceArg(std::string_view n, std::integral auto v) : name(n), value(std::to_string(v)) {}
  AdviceArg(std::string_view n, double v);
};

// The versions a row's condition is tested against ("" unknown: a condition on it fails).
struct AdviceVersions {
  std::string_view torch = {};
  std::string_view torch_npu = {};
  std::span<const std::pair<std::string_view, std::string_view>> libraries = {};  // {"transformers", "4.46.0"}
  std::string_view of(std::string_view package) const;
};

struct AdviceRow {
  std::string file;       // "rules.tsv"
  size_t line = 0;
  std::string rule;       // "AMP004", "shim"
  std::string key;        // "fix", "scaler_sync_note"
  std::string when;       // "*" or "torch>=2.1;torch_npu<2.2"
  std::string text;       // escapes resolved; placeholders not yet filled
};

class AdviceTexts {
 public:
  static const AdviceTexts& builtin();
  // Parses one data/texts file; throws KnowledgeError naming the file and line.
  void parse(std::string_view file_name, std::string_view text);
  // The row `rule`/`key` uses with these versions; throws std::logic_error when the key is unknown.
  const AdviceRow& row(std::string_view rule, std::string_view key, const AdviceVersions& versions = {}) const;
  const std::vector<AdviceRow>& rows() const { return rows_; }

 private:
  std::vector<AdviceRow> rows_;
};

// The text of `rule`/`key` with its placeholders filled. Throws std::logic_error when the key is
// unknown, a placeholder has no value or a value no placeholder (a mistake the unit test catches).
std::string advice(std::string_view rule, std::string_view key, std::initializer_list<AdviceArg> args = {},
                   const AdviceVersions& versions = {});
// `text`'s placeholders filled from `args` (the same checks).
std::string fill_placeholders(std::string_view text, std::span<const AdviceArg> args);
// The placeholder names of `text`, in order of first use: `{name}`, name [a-z_][a-z0-9_]*;
// any other brace is text.
std::vector<std::string> placeholders_of(std::string_view text);
// Whether `versions` meet `when` ("*", "torch>=2.1", "torch_npu>=2.1,<2.3;transformers>=4.46").
bool advice_condition_met(std::string_view when, const AdviceVersions& versions);

std::span<const EmbeddedFile> embedded_advice_texts();

}  // namespace npud
