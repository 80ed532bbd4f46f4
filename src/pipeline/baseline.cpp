#include "pipeline/baseline.hpp"

#include <cctype>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <simdjson.h>

#include "report/json_writer.hpp"
#include "util/atomic_file.hpp"
#include "util/regular_file.hpp"

namespace npud {
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMaxBaselineBytes = 256 << 20;
constexpr std::string_view kFormatKey = "npu_doctor_baseline";

// "called 12 times, 3.4 ms" -> "called # times, #.# ms": what stays when the run changes.
std::string without_numbers(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      out += '#';
      while (i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) ++i;
    } else {
      out += s[i];
    }
  }
  return out;
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

BaselineEntry baseline_entry(std::string_view rule, const std::string& file, int line, const std::string& message,
                             std::string_view op, const std::string& baseline_path, SourceLineCache& lines) {
  BaselineEntry e;
  e.id = rule;
  e.file = relative_to_baseline(file, baseline_path);
  e.line = line;
  e.message = message;
  std::string text = lines.line_text(file, line);
  e.fingerprint = !text.empty() ? "line:" + text : fmt::format("message:{}|{}", op, without_numbers(message));
  return e;
}

Baseline Baseline::load(const std::string& path) {
  std::string text, error;
  if (!read_regular_file(path, kMaxBaselineBytes, text, error)) throw std::runtime_error(path + ": " + error);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  int64_t version = 0;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS || !doc.is_object() ||
      doc[kFormatKey].get_int64().get(version) != simdjson::SUCCESS)
    throw std::runtime_error(fmt::format("{}: not an npu-doctor baseline (write one with --write-baseline)", path));
  simdjson::dom::array items;
  if (doc["findings"].get_array().get(items) != simdjson::SUCCESS)
    throw std::runtime_error(fmt::format("{}: its \"findings\" is not an array", path));
  Baseline b;
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
  auto it = left_.find({e.id, e.file, e.fingerprint});
  if (it == left_.end() || it->second == 0) return false;
  --it->second;
  return true;
}

void write_baseline(const std::string& path, std::string_view command, const std::vector<BaselineEntry>& entries) {
  AtomicFile out(path);
  JsonWriter w(out.stream(), 2);
  w.begin_object();
  w.field(kFormatKey, 1).field("command", command);
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
        entries.push_back(baseline_entry(f.rule, f.location.file, f.location.line, f.message, f.location.op, write_path, lines));
    write_baseline(write_path, command, entries);
  }
  if (baseline_path.empty()) return 0;
  Baseline b = Baseline::load(baseline_path);
  size_t before = findings.size();
  std::erase_if(findings, [&](const Finding& f) {
    return !f.first &&
           b.take(baseline_entry(f.rule, f.location.file, f.location.line, f.message, f.location.op, baseline_path, lines));
  });
  return before - findings.size();
}

}  // namespace npud
