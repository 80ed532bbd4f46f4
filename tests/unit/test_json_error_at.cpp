// Where a whole-document JSON input (communication.json, communication_matrix.json, rank
// summaries) goes wrong: the same byte offset whichever simdjson the build uses (Debian's 3.0
// in system builds, 3.6 in the portable wheel: 3.6 finds an open bracket before walking and
// names no place, so the reader finds it itself).
#include <gtest/gtest.h>

#include <string>

#include "ingest/json_error_at.hpp"

using npud::json_error_offset;

namespace {

uint64_t offset_of(const std::string& text) { return json_error_offset(simdjson::padded_string(text)); }

}  // namespace

TEST(JsonErrorAt, TextThatStopsEarlyIsItsEnd) {
  EXPECT_EQ(offset_of(R"({"step1": [)"), 11u);
  EXPECT_EQ(offset_of(R"([1, 2, {"x": "y)"), 15u);
}

TEST(JsonErrorAt, BracketsThatCloseTheWrongThingAreNamed) {
  EXPECT_EQ(offset_of(R"({"a": ]})"), 6u);
  EXPECT_EQ(offset_of(R"({"a": [1, 2}})"), 11u);
  EXPECT_EQ(offset_of(R"({"a": 1} ])"), 9u);
}
