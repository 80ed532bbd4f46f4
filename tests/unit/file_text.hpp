// A test's whole input or output file as bytes ("" when it cannot be read): one helper for the
// suites that compare files with what they expect.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace npud::test {

inline std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace npud::test
