// src/cli/python_options.hpp is generated from the shim's python/npu_doctor/_interpreter.py (one
// list of CPython's options that take a value, for `run`'s -E/-I check and the shim's launcher
// detection): it must be what tools/gen_python_options.py makes of it.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace npud {
namespace {

TEST(PythonOptions, GeneratedHeaderUpToDate) {
  namespace fs = std::filesystem;
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  std::string cmd = "/usr/bin/python3 '" + (fs::path(NPUD_SOURCE_DIR) / "tools" / "gen_python_options.py").string() +
                    "' --check";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

}  // namespace
}  // namespace npud
