// What happens to a scan's findings after its rules ran (cli/scan.cpp): per-file-ignores,
// the baseline, and --fix/--diff applying the fixes that are left.
#include "pipeline/scan_fixes.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "source/fixes.hpp"
#include "source/source_encoding.hpp"
#include "util/atomic_file.hpp"
#include "util/escape.hpp"

namespace npud {
namespace {

// The fixes that move a program from CUDA to the NPU (device strings, .cuda(), torch.cuda,
// the backend, .is_cuda gates) only make sense together: half of them leave a program that
// mixes devices. When --select/--ignore leaves some of a file's out, none is applied there;
// `why` says which one was left out.
bool device_fixes_split(const FileResult& r, const ScanOptions& opts, std::string& why) {
  if (!opts.filter.filters()) return false;
  auto moves_device = [](std::string_view rule) {
    return rule == "CUDA001" || rule == "CUDA002" || rule == "CUDA003" || rule == "CUDA004" || rule == "CUDA007";
  };
  bool applies = false;
  for (const auto& f : r.findings) applies = applies || (f.fixable() && moves_device(f.rule));
  if (!applies) return false;
  ScanOptions all = opts;
  all.filter = RuleFilter();
  for (const auto& f : scan_source(r.path, r.text, all).findings) {
    if (!f.fixable() || !moves_device(f.rule) || opts.filter.enabled(f.rule)) continue;
    why = fmt::format("{} at line {} is left out by --select/--ignore", f.rule, f.location.line);
    return true;
  }
  return false;
}

// Why --fix must leave a file as it is, "" when it may replace it: only a regular file the
// scan read unchanged, writable, owned by us (or we are root), with no other hard link (the
// replacement is a new file: a rename would split the links, and owner/mode would change).
std::string why_not_writable(const FileResult& r) {
  struct stat st;
  if (::lstat(r.path.c_str(), &st) != 0) return fmt::format("cannot stat it: {}", std::strerror(errno));
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link (fix the file it points to, inside the tree you scan)";
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if ((st.st_mode & 0222) == 0 || ::access(r.path.c_str(), W_OK) != 0) return "it is read-only";
  if (st.st_uid != ::geteuid() && ::geteuid() != 0) return "it belongs to another user";
  if (st.st_nlink > 1) return fmt::format("it has {} hard links, which a replacement would split", st.st_nlink);
  std::ifstream in(r.path, std::ios::binary);
  std::ostringstream now;
  now << in.rdbuf();
  if (!in.good() && !in.eof()) return "it could not be read again";
  std::string again = now.str();
  if (!decode_python_source(again).error.empty() || again != r.text)
    return "it changed while the scan ran (your edits are kept)";
  return {};
}

// --diff writes nothing, so the findings that remain after its fixes are reported at the lines
// of the files as they are: one the first scan had is taken as it was (line, column, edits);
// one the fixes brought is put at the line its hunk replaces, without edits.
std::vector<Finding> at_original_lines(const FileResult& original, std::string_view fixed_text,
                                           std::vector<Finding> remaining) {
  const std::vector<LineOrigin> origins = line_origins(original.text, fixed_text);
  auto origin = [&](int line) {
    return line >= 1 && size_t(line) <= origins.size() ? origins[size_t(line) - 1] : LineOrigin{size_t(std::max(line, 1) - 1), true};
  };
  std::vector<bool> used(original.findings.size());
  std::vector<Finding> out;
  for (Finding& f : remaining) {
    LineOrigin o = origin(f.location.line);
    const int line = int(std::min(o.old_line + 1, size_t(std::max<size_t>(original.lines, 1))));
    size_t match = used.size();
    for (size_t k = 0; k < original.findings.size() && match == used.size(); ++k) {
      const Finding& g = original.findings[k];
      if (!used[k] && g.rule == f.rule && g.location.line == line && (!o.same || g.location.column == f.location.column)) match = k;
    }
    if (match < used.size()) {
      used[match] = true;
      out.push_back(original.findings[match]);
      continue;
    }
    f.location.end_line = std::max(line, int(origin(f.location.end_line).old_line) + 1);
    if (!o.same) f.location.column = 1, f.location.end_column = 1;
    f.location.line = line;
    f.edits.clear();
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    return a.location.line != b.location.line ? a.location.line < b.location.line : a.location.column < b.location.column;
  });
  return out;
}

}  // namespace

std::vector<Finding> HeldBack::fixable(const FileResult& r, std::string_view text,
                                       const std::vector<Finding>& findings) const {
  std::optional<Baseline> left = baseline;   // each entry holds back one finding
  SourceLineCache lines(nullptr);
  lines.use_text(r.path, text);
  std::vector<Finding> out;
  for (const Finding& f : findings) {
    if (ignores && ignores->ignores(r.path, f.rule)) continue;
    if (left && left->take(baseline_entry(f.rule, r.path, f.location.line, f.message, baseline_path, lines))) continue;
    out.push_back(f);
  }
  return out;
}

// Applies each file's fixes (re-scanning until nothing more applies, at most 4 rounds) and
// either writes the files (--fix) or prints a diff (--diff). Returns the number of fixed findings.
size_t fix_files(std::vector<FileResult>& results, const ScanOptions& opts, bool write, bool& io_error,
                 const HeldBack& held) {
  size_t fixed = 0;
  for (auto& r : results) {
    if (r.status != FileStatus::Scanned || r.syntax_error) continue;
    size_t fixable_before = 0;
    for (const auto& f : r.findings) fixable_before += f.fixable();
    if (!fixable_before) continue;
    if (std::string why; device_fixes_split(r, opts, why)) {
      std::cerr << fmt::format("npu-doctor: {}: not fixed: the CUDA-to-NPU fixes go together and {}; "
                               "applying only some would leave a program that mixes devices\n",
                               terminal_safe(r.path), why);
      continue;
    }
    std::string text = r.text;
    FileResult cur = r;
    for (int round = 0; round < 4; ++round) {
      auto edits = collect_edits(held.fixable(r, text, cur.findings));
      if (edits.empty()) break;
      std::vector<TextEdit> applied;
      std::string next = apply_edits(text, edits, &applied);
      if (applied.empty() || next == text) break;
      FileResult again = scan_source(r.path, next, opts);
      if (again.syntax_error) {  // a fix must never break a file: keep what we had
        std::cerr << fmt::format("npu-doctor: internal: fixes for {} would not parse; left unchanged\n", terminal_safe(r.path));
        break;
      }
      text = std::move(next);
      cur = std::move(again);
    }
    if (text == r.text) continue;
    size_t fixable_after = 0;
    for (const auto& f : cur.findings) fixable_after += f.fixable();
    size_t fixed_here = fixable_before > fixable_after ? fixable_before - fixable_after : 0;
    if (write) {
      if (std::string why = why_not_writable(r); !why.empty()) {
        std::cerr << fmt::format("npu-doctor: {}: not fixed: {}\n", terminal_safe(r.path), why);
        continue;
      }
      std::string bytes, why_not;
      if (!encode_python_source(text, r.encoding, bytes, why_not)) {
        std::cerr << fmt::format("npu-doctor: {}: not fixed: {}\n", terminal_safe(r.path), why_not);
        continue;
      }
      try {
        // AtomicFile keeps the file's mode and owner (symlinks and hard links were refused above).
        AtomicFile out(r.path, AtomicFile::Replace::input);
        out.stream() << bytes;
        out.commit();
      } catch (const std::exception& e) {
        std::cerr << "npu-doctor: error: " << e.what() << '\n';
        io_error = true;
        continue;
      }
    } else {
      std::error_code ec;
      std::string cwd = std::filesystem::current_path(ec).string();
      std::cout << unified_diff(ec ? r.path : diff_header_path(r.path, cwd), r.text, text);
    }
    fixed += fixed_here;  // counted once written (or shown, with --diff)
    cur.text.clear();
    r.findings = write ? std::move(cur.findings) : at_original_lines(r, text, std::move(cur.findings));
  }
  return fixed;
}

// per-file-ignores of the configuration: drops those findings; returns how many.
size_t drop_path_ignored(std::vector<FileResult>& results, const PathIgnores& ignores) {
  size_t n = 0;
  for (auto& r : results)
    n += std::erase_if(r.findings, [&](const Finding& f) { return ignores.ignores(r.path, f.rule); });
  return n;
}

// --write-baseline, then --baseline (pipeline/baseline.hpp). Returns how many the baseline held.
size_t apply_scan_baseline(std::vector<FileResult>& results, const std::string& baseline,
                           const std::string& write_baseline_path) {
  SourceLineCache lines(nullptr);   // the files the user named: read as the scan read them
  auto entry = [&](const FileResult& r, const Finding& f, const std::string& path) {
    return baseline_entry(f.rule, r.path, f.location.line, f.message, path, lines);
  };
  if (!write_baseline_path.empty()) {
    std::vector<BaselineEntry> entries;
    for (const auto& r : results)
      for (const auto& f : r.findings) entries.push_back(entry(r, f, write_baseline_path));
    write_baseline(write_baseline_path, "scan", entries);
  }
  if (baseline.empty()) return 0;
  Baseline b = Baseline::load(baseline);
  size_t n = 0;
  for (auto& r : results)
    n += std::erase_if(r.findings, [&](const Finding& f) { return b.take(entry(r, f, baseline)); });
  return n;
}

}  // namespace npud
