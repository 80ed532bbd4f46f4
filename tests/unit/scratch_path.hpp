// A temporary path of one test's own: named after the running test and the process, so tests
// that ctest or the sanitizer shards run side by side never share (and delete) one another's
// files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace npud::test {

// temp/<stem>_<Suite>.<Test>_<pid><suffix>; `suffix` keeps a file's extension (".json").
inline std::filesystem::path scratch_path(std::string_view stem, std::string_view suffix = {}) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name(stem);
  if (info) name += std::string("_") + info->test_suite_name() + "." + info->name();
  name += "_" + std::to_string(::getpid());
  name += suffix;
  return std::filesystem::temp_directory_path() / name;
}

}  // namespace npud::test
