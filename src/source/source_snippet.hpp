// The source lines an HTML report shows around a finding. The file and line come from the
// trace or capture, which is untrusted input: a crafted capture can name /proc/self/environ,
// ~/.aws/credentials or a 2 GB file. So a snippet is read only when the file is
//   - a regular Python source file (*.py): source is what a snippet is for;
//   - not under /proc, /sys or /dev, before or after symlinks are resolved;
//   - under one of the policy's folders, after symlinks are resolved: the working directory
//     npu-doctor runs in, plus, for `run`/`amp-check` (which launched the program themselves),
//     the program's recorded working directory and its script's folder. A trace analysed
//     later cannot widen this: its recorded folders are as untrusted as its frames.
// and it is read with bounds: only up to the lines shown, at most kMaxSnippetBytes, each line
// cut to kMaxSnippetLineChars. A file refused or cut short gives a `withheld` reason the
// report shows instead of the lines (docs/security.md). A file that is not there gives
// nothing: traces are often read on another machine than the one that recorded them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.hpp"
#include "model/finding.hpp"

namespace npud {

inline constexpr uint64_t kMaxSnippetBytes = 1 << 20;
inline constexpr size_t kMaxSnippetLineChars = 300;

struct SnippetPolicy {
  std::vector<std::filesystem::path> roots;  // canonical folders snippets may come from
};

// The folders a report's snippets may come from: the working directory; with
// `program_ran_here` (run, amp-check) also the capture's recorded cwd and argv[0]'s folder.
SnippetPolicy snippet_policy(const Trace* trace, bool program_ran_here);

struct Snippet {
  int first_line = 0;               // number of lines[0]
  std::vector<std::string> lines;   // raw text, each cut to kMaxSnippetLineChars
  std::string withheld;             // why no lines are shown ("" when shown or no file)
};

// Opens `file` read-only when the policy allows it (nullptr: a file the user named, e.g. to
// `scan`: any regular file, still never /proc, /sys or /dev). Returns the fd, or -1 with
// `withheld` saying why it was refused ("" when the file is simply not there).
int open_source_file(const std::string& file, const SnippetPolicy* policy, std::string& withheld);

// The file's lines (without line ends) from its first kMaxSnippetBytes; empty when the file is
// not there or refused. For suppression comments and baseline fingerprints.
std::vector<std::string> read_source_lines(const std::string& file, const SnippetPolicy* policy);

// Reads source lines once per file, under a snippet policy (nullptr: files the user named): the
// text baseline entries and SARIF fingerprints hold instead of line numbers.
class SourceLineCache {
 public:
  explicit SourceLineCache(const SnippetPolicy* policy) : policy_(policy) {}
  // The stripped text of file:line, "" when unreadable.
  std::string line_text(const std::string& file, int line);
  // Takes `text` as the file's content from now on (scan --fix: the text a fix made, not yet written).
  void use_text(const std::string& file, std::string_view text);

 private:
  const SnippetPolicy* policy_;
  std::map<std::string, std::vector<std::string>> files_;
};

// `context` lines either side of loc.line, when the policy allows the file.
Snippet read_snippet(const Location& loc, int context, const SnippetPolicy& policy);

}  // namespace npud
