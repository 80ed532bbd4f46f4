// The bytes of a Python file as the interpreter reads them (PEP 263, PEP 3120): UTF-8 unless
// a coding cookie on line 1 or 2 names another encoding (`# -*- coding: latin-1 -*-`, gbk,
// cp1252, shift_jis...). The scan parses UTF-8 only, so other encodings are converted for
// the scan and converted back when --fix writes the file.
#pragma once

#include <string>
#include <string_view>

namespace npud {

struct SourceEncoding {
  std::string name;   // the cookie's encoding as written ("latin-1"); "" for UTF-8
  std::string error;  // why the bytes cannot be read: "" when they can
};

// Reads the coding cookie of `raw` and converts it to UTF-8 in place. On error `raw` is left
// as it was and `error` says what is wrong, with the byte offset where there is one.
SourceEncoding decode_python_source(std::string& raw);

// Converts UTF-8 `text` back to the encoding `name` (as decode_python_source returned it);
// false, with `error` set, when some character has no representation there.
bool encode_python_source(const std::string& text, const std::string& name, std::string& out, std::string& error);

}  // namespace npud
