// PORT001 cuda-only-code: the program a capture ran has CUDA-only code in its own file (a device
// chosen with torch.cuda.is_available(), "cuda" strings, torch.cuda calls). A capture made on a
// CPU or GPU machine shows the CPU or CUDA path; on an Ascend machine the same file picks the
// CPU (cuda is not available there) or raises. The scan rules (CUDA001-CUDA007) find those
// places; this rule runs them on the program's file and points at `npu-doctor scan --fix`.
// See docs/rules/PORT001.md.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "knowledge/advice_texts.hpp"
#include "model/trace.hpp"
#include "rules/builtin_rules.hpp"
#include "source/scanner.hpp"
#include "source/source_rules.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;

// The program's own file: argv[0] of the capture header, against the recorded cwd.
fs::path program_file(const Trace& t) {
  std::string_view argv = t.env_value("argv");
  std::string first(argv.substr(0, argv.find(' ')));
  if (first.empty() || !first.ends_with(".py")) return {};
  fs::path p(first);
  if (p.is_relative() && !t.env_value("cwd").empty()) p = fs::path(std::string(t.env_value("cwd"))) / p;
  std::error_code ec;
  return fs::is_regular_file(p, ec) ? p : fs::path();
}

class CudaOnlyCode final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"PORT001", "cuda-only-code",
        "the captured program's own file has CUDA-only code (device choice, cuda strings): scan --fix moves it",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (!t.caps.program_argv || !scan_available()) return;
    const fs::path path = program_file(t);
    if (path.empty()) return;
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ScanOptions opts;
    opts.threads = 1;
    opts.filter = RuleFilter({"CUDA"}, {}, source_rule_refs());
    FileResult r = scan_source(path.string(), std::move(text), opts);
    if (r.status != FileStatus::Scanned || r.findings.empty()) return;
    // Lead with where the device is chosen: a line asking torch.cuda for devices (`"cuda" if
    // torch.cuda.is_available() else "cpu"`), else a device-type test (nanoGPT's `device_type =
    // 'cuda' if 'cuda' in device else 'cpu'`), not another torch.cuda call (a GradScaler); not
    // with the missing `import torch_npu` (CUDA006), which only follows from those; then the
    // most severe, the first line.
    std::set<int> chooses, tests;
    for (const Finding& s : r.findings) {
      if (s.rule == "CUDA003" && (s.message.starts_with("torch.cuda.is_available") ||
                                  s.message.starts_with("torch.cuda.device_count")))
        chooses.insert(s.location.line);
      if (s.rule == "CUDA001" && s.message.find("this test is False for an NPU device") != std::string::npos)
        tests.insert(s.location.line);
    }
    auto rank = [&](const Finding& s) {
      return std::make_tuple(chooses.contains(s.location.line), tests.contains(s.location.line), s.rule != "CUDA006",
                             int(s.severity), -s.location.line);
    };
    const Finding* first = &r.findings.front();
    for (const Finding& s : r.findings)
      if (rank(s) > rank(*first)) first = &s;
    Finding f;
    f.rule = "PORT001";
    f.severity = first->severity >= Severity::Warning ? Severity::Warning : Severity::Info;
    f.location.file = path.string();
    f.location.line = first->location.line;
    size_t fixable = 0;
    for (const Finding& s : r.findings) fixable += s.fixable();
    f.message = fmt::format("{} has CUDA-only code in {} place{} ({} at line {}: {}): this capture shows the path "
                            "this machine took; on an Ascend machine the file takes another one",
                            path.filename().string(), r.findings.size(), r.findings.size() == 1 ? "" : "s",
                            first->rule, first->location.line, first->message);
    f.fix = advice("PORT001", "fix",
                   {{"path", path.string()},
                    {"fixable", fixable},
                    {"count", r.findings.size()},
                    {"plural", r.findings.size() == 1 ? "" : "s"}});
    for (const Finding& s : r.findings)
      f.notes.push_back(advice("PORT001", "place_note", {{"rule", s.rule}, {"line", s.location.line}, {"message", s.message}}));
    f.metrics = {{"count", double(r.findings.size())}, {"fixable", double(fixable)}};
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& port001_rule() {
  static const CudaOnlyCode rule;
  return rule;
}

}  // namespace npud
