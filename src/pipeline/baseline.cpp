#include "pipeline/baseline.hpp"

#include <cctype>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <simdjson.h>

#include "util/json_writer.hpp"
#include "rules/builtin_rules.hpp"
#include "util/atomic_file.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace npud {
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMaxBaselineBytes = 256 << 20;
constexpr std::string_view kFormatKey = "npu_doctor_baseline";
constexpr int64_t kFormat = 2;

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Format 1's message key: "called 12 times, 3.4 ms" -> "called # times, #.# ms".
std::string digits_blanked(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (digit(s[i])) {
      out += '#';
      while (i + 1 < s.size() && digit(s[i + 1])) ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

// "called 12 times, 3.4 ms (2.9%), 1.0 MiB" -> "called # times, # (#), #": a number with its
// unit is one blank, so "273 us" and "7.35 ms" of two runs read the same.
std::string numbers_blanked(std::string_view s) {
  static constexpr std::string_view kUnits[] = {"ns", "us", "ms", "s", "%", "KiB", "MiB", "GiB", "TiB", "B", "x"};
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (!digit(s[i])) {
      out += s[i++];
      continue;
    }
    while (i < s.size() && (digit(s[i]) || (s[i] == '.' && i + 1 < s.size() && digit(s[i + 1])))) ++i;
    size_t after_space = i < s.size() && s[i] == ' ' ? i + 1 : i;
    for (std::string_view u : kUnits) {
      std::string_view rest = s.substr(after_space);
      if (rest.starts_with(u) && (rest.size() == u.size() || !std::isalnum(static_cast<unsigned char>(rest[u.size()])))) {
        i = after_space + u.size();
        break;
      }
    }
    out += '#';
  }
  return out;
}

bool ranks_timings(std::string_view rule) {
  const Rule* r = find_trace_rule(rule);
  return r && r->ranks_timings();
}

std::string relative_to_baseline(const std::string& file, const std::string& baseline_path) {
  if (file.empty()) return file;
  std::error_code ec;
  fs::path abs = fs::absolute(fs::path(file), ec).lexically_normal();
  fs::path base = fs::absolute(fs::path(baseline_path), ec).parent_path().lexically_normal();
  if (ec) return file;
  fs::path rel = abs.lexically_relative(base);
  if (rel.empty() || rel.begin()->string() == "..") return abs.string();
  return rel.string();
}

}  // namespace

namespace {

BaselineEntry entry(std::string_view rule, const std::string& file, int line, const std::string& message,
                    const std::string& baseline_path) {
  BaselineEntry e;
  e.id = rule;
  e.file = relative_to_baseline(file, baseline_path);
  e.line = line;
  e.message = message;
  return e;
}

}  // namespace

BaselineEntry baseline_entry(std::string_view rule, const std::string& file, int line, const std::string& message,
                             const std::string& baseline_path, SourceLineCache& lines) {
  BaselineEntry e = entry(rule, file, line, message, baseline_path);
  std::string text = lines.line_text(file, line);
  e.fingerprint = !text.empty() ? "line:" + text : "message:" + numbers_blanked(message);
  e.format1_fingerprint = !text.empty() ? "line:" + text : "message:|" + digits_blanked(message);
  return e;
}

BaselineEntry baseline_entry(const Finding& f, const std::string& baseline_path, SourceLineCache& lines) {
  const Location& at = f.location;
  BaselineEntry e = entry(f.rule, at.file, at.line, f.message, baseline_path);
  std::string text = lines.line_text(at.file, at.line);
  e.format1_fingerprint = !text.empty() ? "line:" + text : fmt::format("message:{}|{}", at.op, digits_blanked(f.message));
  if (ranks_timings(f.rule)) e.fingerprint = "ranked";
  else if (!text.empty()) e.fingerprint = at.op.empty() ? "line:" + text : fmt::format("line:{}|{}", text, at.op);
  else if (!at.op.empty())
    e.fingerprint = at.library.empty() ? "op:" + at.op
                                       : fmt::format("op:{}|{}/{}|{}", at.op, at.library.package, at.library.file,
                                                     at.library.function);
  else e.fingerprint = "message:" + numbers_blanked(f.message);
  return e;
}

Baseline Baseline::load(const std::string& path) {
  std::string text, error;
  if (!read_regular_file(path, kMaxBaselineBytes, text, error)) throw std::runtime_error(path + ": " + error);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  int64_t version = 0;
  // A BOM (an editor on Windows saved it) is no part of the JSON, as for the trace readers.
  if (size_t bom = utf8_bom_size(text)) text.erase(0, bom);
  if (parser.parse(text).get(doc) != simdjson::SUCCESS || !doc.is_object() ||
      doc[kFormatKey].get_int64().get(version) != simdjson::SUCCESS)
    throw std::runtime_error(fmt::format("{}: not an npu-doctor baseline (write one with --write-baseline)", path));
  if (version < 1 || version > kFormat)
    throw std::runtime_error(fmt::format("{}: baseline format {} (this npu-doctor reads 1 to {}: write it again with "
                                         "--write-baseline)", path, version, kFormat));
  simdjson::dom::array items;
  if (doc["findings"].get_array().get(items) != simdjson::SUCCESS)
    throw std::runtime_error(fmt::format("{}: its \"findings\" is not an array", path));
  Baseline b;
  b.format_ = version;
  size_t n = 0;
  for (simdjson::dom::element item : items) {
    ++n;
    std::string_view id, file, fp;
    if (item["id"].get_string().get(id) != simdjson::SUCCESS || item["file"].get_string().get(file) != simdjson::SUCCESS ||
        item["fingerprint"].get_string().get(fp) != simdjson::SUCCESS)
      throw std::runtime_error(fmt::format("{}: finding {} lacks \"id\", \"file\" or \"fingerprint\"", path, n));
    ++b.left_[{std::string(id), std::string(file), std::string(fp)}];
  }
  return b;
}

bool Baseline::take(const BaselineEntry& e) {
  auto it = left_.find({e.id, e.file, format_ == 1 ? e.format1_fingerprint : e.fingerprint});
  if (it == left_.end() || it->second == 0) return false;
  --it->second;
  return true;
}

void write_baseline(const std::string& path, std::string_view command, const std::vector<BaselineEntry>& entries) {
  // "-" is stdout for every output of npu-doctor; a baseline is a file to keep.
  if (path == "-") throw std::runtime_error("--write-baseline names a file to keep; - (stdout) is not one");
  AtomicFile out(path);
  JsonWriter w(out.stream(), 2);
  w.begin_object();
  w.field(kFormatKey, kFormat).field("command", command);
  w.key("findings").begin_array();
  for (const BaselineEntry& e : entries) {
    w.begin_object().field("id", e.id).field("file", e.file).field("line", e.line);
    w.field("fingerprint", e.fingerprint).field("message", e.message).end_object();
  }
  w.end_array().end_object();
  out.stream() << '\n';
  out.commit();
}

size_t apply_baseline(std::vector<Finding>& findings, const std::string& baseline_path, const std::string& write_path,
                      std::string_view command, const SnippetPolicy& policy) {
  if (baseline_path.empty() && write_path.empty()) return 0;
  SourceLineCache lines(&policy);
  if (!write_path.empty()) {
    std::vector<BaselineEntry> entries;
    for (const Finding& f : findings)
      if (!f.first)
        entries.push_back(baseline_entry(f, write_path, lines));
    write_baseline(write_path, command, entries);
  }
  if (baseline_path.empty()) return 0;
  Baseline b = Baseline::load(baseline_path);
  size_t before = findings.size();
  std::erase_if(findings, [&](const Finding& f) {
    return !f.first &&
           b.take(baseline_entry(f, baseline_path, lines));
  });
  return before - findings.size();
}

}  // namespace npud
