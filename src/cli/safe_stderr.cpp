#include "cli/safe_stderr.hpp"

#include <cstdio>
#include <iostream>
#include <streambuf>
#include <string>

#include "util/escape.hpp"

namespace npud {
namespace {

// Collects what std::cerr writes and hands it to stdio's stderr escaped at each flush
// (std::cerr is unitbuf: after every <<), so its order with fprintf(stderr) is kept.
class TerminalSafeBuf : public std::streambuf {
 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) pending_ += traits_type::to_char_type(c);
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, size_t(n));
    return n;
  }
  int sync() override {
    if (pending_.empty()) return 0;
    // A UTF-8 sequence cut at the end waits for its other bytes (terminal_safe would show
    // the halves as two bad bytes).
    size_t keep = incomplete_utf8_tail();
    std::string safe = terminal_safe(std::string_view(pending_).substr(0, pending_.size() - keep), true);
    pending_.erase(0, pending_.size() - keep);
    return std::fwrite(safe.data(), 1, safe.size(), stderr) == safe.size() && std::fflush(stderr) == 0 ? 0 : -1;
  }

 private:
  size_t incomplete_utf8_tail() const {
    size_t n = pending_.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
      unsigned char c = static_cast<unsigned char>(pending_[n - back]);
      if ((c & 0xC0) == 0x80) continue;                                // a continuation byte
      size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;  // the lead byte's length
      return need > back ? back : 0;
    }
    return 0;
  }

  std::string pending_;
};

}  // namespace

void make_stderr_terminal_safe() {
  static TerminalSafeBuf buf;   // lives to the process's end: static destructors may still write
  std::cerr.rdbuf(&buf);
}

}  // namespace npud
