// A test input from ../shared (real traces, the op data): beside a checkout that has ../shared,
// as in CI, a missing one fails the test (a renamed fixture must not turn its tests into silent
// skips); a checkout without ../shared skips with the path named. tools/test.sh sets
// NPUD_REQUIRE_SHARED=1 when ../shared is there.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace npud::test {

inline bool shared_inputs_required() {
  const char* v = std::getenv("NPUD_REQUIRE_SHARED");
  return v && std::string_view(v) == "1";
}

}  // namespace npud::test

#define REQUIRE_FIXTURE(p)                                                                                  \
  if (!std::filesystem::exists(p)) {                                                                        \
    if (::npud::test::shared_inputs_required()) FAIL() << "required test input missing (NPUD_REQUIRE_SHARED=1): " << (p); \
    else GTEST_SKIP() << "fixture not found (needs ../shared beside the project): " << (p);                 \
  }
