#include "source/source_encoding.hpp"

#include <iconv.h>

#include <cctype>
#include <cerrno>
#include <string>

#include "source/scanner.hpp"
#include "util/text.hpp"

namespace npud {

namespace {

// PEP 263: `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)` on line 1, or on line 2 when line 1 is
// blank or a comment. Returns the name, "" when there is none.
std::string coding_cookie(std::string_view text) {
  size_t pos = 0;
  for (int line = 0; line < 2 && pos <= text.size(); ++line) {
    size_t end = text.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    size_t i = 0;
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t' || l[i] == '\f')) ++i;
    if (i == l.size()) {  // blank line 1: look at line 2
    } else if (l[i] != '#') {
      return {};  // code: a cookie below it does not count
    } else {
      for (size_t c = l.find("coding", i); c != std::string_view::npos; c = l.find("coding", c + 1)) {
        size_t k = c + 6;
        if (k >= l.size() || (l[k] != ':' && l[k] != '=')) continue;
        ++k;
        while (k < l.size() && (l[k] == ' ' || l[k] == '\t')) ++k;
        size_t s = k;
        while (k < l.size() && (std::isalnum(static_cast<unsigned char>(l[k])) || l[k] == '-' || l[k] == '_' || l[k] == '.'))
          ++k;
        if (k > s) return std::string(l.substr(s, k - s));
      }
    }
    pos = end + (end + 1 < text.size() && text[end] == '\r' && text[end + 1] == '\n' ? 2 : 1);
  }
  return {};
}

// Python's spelling of an encoding -> what iconv knows, "" for UTF-8.
std::string iconv_name(const std::string& cookie) {
  std::string n = to_lower(cookie);
  for (char& c : n)
    if (c == '_') c = '-';
  if (n == "utf-8" || n == "utf8" || n.starts_with("utf-8-")) return {};
  if (n == "latin-1" || n == "latin1" || n == "iso-latin-1" || n == "l1" || n == "iso-8859-1" || n == "iso8859-1")
    return "ISO-8859-1";
  return n;
}

// Converts all of `in`; false with the offset of the first byte iconv could not take.
bool convert(const char* to, const char* from, const std::string& in, std::string& out, size_t& bad) {
  iconv_t cd = iconv_open(to, from);
  if (cd == iconv_t(-1)) {
    bad = std::string::npos;
    return false;
  }
  out.assign(in.size() * 2 + 16, '\0');
  char* src = const_cast<char*>(in.data());
  size_t src_left = in.size(), done = 0;
  bool ok = true;
  while (src_left) {
    char* dst = out.data() + done;
    size_t dst_left = out.size() - done;
    size_t r = iconv(cd, &src, &src_left, &dst, &dst_left);
    done = size_t(dst - out.data());
    if (r != size_t(-1)) continue;
    if (errno == E2BIG) {
      out.resize(out.size() * 2);
      continue;
    }
    ok = false;  // EILSEQ / EINVAL: an invalid or cut sequence
    bad = in.size() - src_left;
    break;
  }
  iconv_close(cd);
  out.resize(done);
  return ok;
}

}  // namespace

SourceEncoding decode_python_source(std::string& raw) {
  SourceEncoding e;
  bool bom = raw.starts_with("\xEF\xBB\xBF");
  std::string cookie = coding_cookie(std::string_view(raw).substr(bom ? 3 : 0));
  std::string name = iconv_name(cookie);
  if (!name.empty() && bom) {
    e.error = "a UTF-8 byte order mark and a `coding: " + cookie + "` cookie disagree";
    return e;
  }
  if (name.empty()) {
    if (size_t bad = first_invalid_utf8(raw); bad != std::string_view::npos)
      e.error = "not UTF-8 (invalid byte at offset " + std::to_string(bad) + ")" +
                (cookie.empty() ? "; a `# -*- coding: NAME -*-` line names another encoding" : "");
    return e;
  }
  std::string utf8;
  size_t bad = 0;
  if (!convert("UTF-8", name.c_str(), raw, utf8, bad)) {
    e.error = bad == std::string::npos ? "unknown encoding `" + cookie + "` in its coding cookie"
                                       : "not valid " + cookie + " (invalid byte at offset " + std::to_string(bad) + ")";
    return e;
  }
  raw = std::move(utf8);
  e.name = cookie;
  return e;
}

bool encode_python_source(const std::string& text, const std::string& name, std::string& out, std::string& error) {
  std::string target = iconv_name(name);
  if (target.empty()) {
    out = text;
    return true;
  }
  size_t bad = 0;
  if (convert(target.c_str(), "UTF-8", text, out, bad)) return true;
  error = "the fixed text cannot be written in " + name;
  return false;
}

}  // namespace npud
