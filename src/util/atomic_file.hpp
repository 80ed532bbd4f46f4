// Writes an output file (every -o/--report, scan --fix, amp-check's lists) so that nothing the
// user had is ever damaged:
//  - a regular file (or a new name) is replaced whole or not at all: the text is kept in
//    memory, then written to a fresh temporary file beside the target (mkstemp: a new, unique,
//    exclusively created name, so nothing planted under a predictable name is followed),
//    fsynced, given the old file's permissions and renamed over it at commit();
//  - a symbolic link is followed: its target is what gets written, the link stays a link;
//  - a character device, FIFO or socket (/dev/null, /dev/stdout, a named pipe) is written to
//    directly, never replaced; so is /proc/self/fd/N (what /dev/stdout leads to) when it is a
//    pipe or socket, which has no path to follow;
//  - a directory, or a link that leads nowhere, is refused;
//  - a file this command reads as an input (protect_input: a trace, a capture, a scanned
//    source) is refused as a report or baseline, by identity (device and inode: another
//    spelling, a link or a hard link to it is the same file); only `scan --fix`, whose job is
//    to rewrite its inputs, opts in (Replace::input).
// A run interrupted before commit() leaves no trace.
#pragma once

#include <sstream>
#include <string>

namespace npud {

// Marks `path` (when it is a regular file) as an input of this command, which no AtomicFile
// replaces unless it says it may.
void protect_input(const std::string& path);

class AtomicFile {
 public:
  enum class Replace { output_only, input };
  // Throws std::runtime_error when path cannot be an output (a directory, a dangling link, an
  // input of this command).
  explicit AtomicFile(std::string path, Replace may = Replace::output_only);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Proves now that commit() can write, without leaving anything: creates and removes a
  // temporary file beside the target (a report directory the user cannot write is refused
  // before a program runs, not after it), or opens a device/pipe for writing without blocking.
  // Throws std::runtime_error naming the path.
  void check_writable() const;

  std::ostream& stream() { return text_; }
  // Writes the text as described above. Throws std::runtime_error on failure (the old file
  // stays, no temporary file is left).
  void commit();

 private:
  std::string path_;        // what the user named
  std::string target_;      // where the bytes go: path_ with symbolic links followed
  bool special_ = false;    // target_ is a device, FIFO or socket: written in place
  std::ostringstream text_;
};

}  // namespace npud
