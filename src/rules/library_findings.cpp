#include "rules/library_findings.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/model_facts.hpp"
#include "analysis/names.hpp"
#include "knowledge/advice_texts.hpp"
#include "knowledge/library_advice.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

// "models/llama/modeling_llama.py" of transformers -> "transformers.models.llama.modeling_llama".
std::string python_module(const LibrarySite& s) {
  std::string m = s.package + "." + s.file;
  if (m.ends_with(".py")) m.resize(m.size() - 3);
  std::replace(m.begin(), m.end(), '/', '.');
  return m;
}

std::string fill(std::string text, const LibrarySite& s) {
  const std::string module = python_module(s);
  for (size_t at = text.find("{module}"); at != std::string::npos; at = text.find("{module}", at + module.size()))
    text.replace(at, 8, module);
  return text;
}

// "transformers.models.t5.modeling_t5.T5ForConditionalGeneration" -> "T5ForConditionalGeneration".
std::string_view short_class(std::string_view qualified) { return qualified.substr(qualified.rfind('.') + 1); }

// "_supports_flash_attn|config.hidden_act" -> "`_supports_flash_attn` or `config.hidden_act`".
std::string or_list(std::string_view condition) {
  std::string out = "`";
  for (char c : condition) out += c == '|' ? std::string("` or `") : std::string(1, c);
  return out + "`";
}

// The generic fixes of the rules speak of the program's own code; at a package site the user
// cannot edit it: say so, and what is left to do.
std::string no_lever_fix(const Finding& f) {
  const LibrarySite& s = f.location.library;
  std::string head = advice("LIBRARY", "no_lever_head", {{"package", s.package}, {"site", s.describe()}});
  if (f.rule.starts_with("SYNC")) return advice("LIBRARY", "no_lever_sync", {{"head", head}});
  return advice("LIBRARY", "no_lever", {{"head", head}, {"fix", f.fix}});
}

// Metrics that add up over the merged sites; the others (a per-call size, a largest gap) take
// the largest.
bool additive(std::string_view key) {
  return key == "count" || key == "per_step" || key == "time_ns" || key == "self_ns" || key == "time_share" ||
         key == "calls" || key == "bytes_per_step" || key == "copy_time_ns";
}

void merge_into(Finding& into, const Finding& other) {
  for (const Metric& m : other.metrics) {
    auto it = std::find_if(into.metrics.begin(), into.metrics.end(), [&](const Metric& x) { return x.key == m.key; });
    if (it == into.metrics.end()) into.metrics.push_back(m);
    else if (additive(m.key)) it->value += m.value;
    else it->value = std::max(it->value, m.value);
  }
  into.cost_ns = into.cost_ns > INT64_MAX - other.cost_ns ? INT64_MAX : into.cost_ns + other.cost_ns;
  into.severity = std::max(into.severity, other.severity);
  into.notes.push_back(advice("LIBRARY", "same_cause_note", {{"message", other.message}}));
}

// The kept finding's message speaks of its own site; after merges its metrics are the sum, so
// the message says so (issue 40: "48 calls" in the message, count=84 in the metrics).
void say_merged(Finding& f, size_t sites) {
  if (double count = f.metric("count", -1); count >= 0 && f.metric("per_step", -1) >= 0)
    f.message += advice("LIBRARY", "merged_counts", {{"sites", std::to_string(sites)}, {"count", format_number(count)},
                                                    {"per_step", format_number(f.metric("per_step"))}});
  else
    f.message += advice("LIBRARY", "merged_sites", {{"sites", std::to_string(sites)}});
}

}  // namespace

void apply_library_advice(std::vector<Finding>& findings, const Trace& trace) {
  const LibraryAdviceTable& table = LibraryAdviceTable::builtin();
  const ModelFacts models(trace);
  std::map<std::string, size_t> by_cause;   // rule, program line, cause -> finding kept
  std::map<size_t, size_t> merged;           // finding kept -> sites merged into it
  std::vector<Finding> out;
  out.reserve(findings.size());
  for (Finding& f : findings) {
    LibrarySite& s = f.location.library;
    if (s.empty()) {
      out.push_back(std::move(f));
      continue;
    }
    // A lever the model it runs in does not have is no lever (T5: no flash attention, no
    // hidden_act): the next row of the site is tried, and the finding says why.
    const std::string model = models.model_of(f.location.module);
    const LibraryAdvice* refused = nullptr;
    const LibraryAdvice* a = table.find(f.rule, s.package, s.version, s.file, s.function, [&](const LibraryAdvice& r) {
      if (r.condition.empty() || models.holds(r.condition, model) != FactHolds::No) return true;
      if (!refused) refused = &r;
      return false;
    });
    if (a && a->lever == "-") continue;   // the site's work is what the library call is for (docs/library-advice.md)
    // One cause at one program line is one finding (without the program's frame, one per
    // cause). Without a row the cause is the package function: Whisper's q, k and v transposes
    // at three lines of one forward are one construct.
    std::string line = no_program_frame(f.location) ? "?" : fmt::format("{}:{}", f.location.file, f.location.line);
    std::string cause = a ? fmt::format("{}/{}", s.package, a->cause) : fmt::format("{}/{}:{}", s.package, s.file, s.function);
    std::string key = fmt::format("{}\x1f{}\x1f{}", f.rule, line, cause);
    if (auto it = by_cause.find(key); it != by_cause.end()) {
      merge_into(out[it->second], f);
      ++merged[it->second];
      continue;
    }
    by_cause.emplace(key, out.size());
    if (a) {
      s.cause = a->cause;
      f.notes.insert(f.notes.begin(), advice("LIBRARY", "does_note", {{"site", s.describe()}, {"does", a->does}}));
      f.fix = fill(a->lever, s);
    } else {
      f.notes.insert(f.notes.begin(), advice("LIBRARY", "package_note", {{"site", s.describe()}}));
      f.fix = no_lever_fix(f);
    }
    if (refused && !a)   // (a model that has another row's lever needs no word on this one)
      f.notes.push_back(advice("LIBRARY", "lever_refused_note",
                               {{"model", short_class(models.model_class(model))}, {"condition", or_list(refused->condition)},
                                {"lever", refused->lever.substr(0, refused->lever.find('\n'))}}));
    out.push_back(std::move(f));
  }
  for (auto [kept, sites] : merged) say_merged(out[kept], sites);
  findings = std::move(out);
}

}  // namespace npud
