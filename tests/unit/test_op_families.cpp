// knowledge/op_families: the op families the core and the capture shim share, read from the
// embedded data/facts/op-families.tsv, and the shim's generated copy of it.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "file_text.hpp"
#include "knowledge/op_families.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;

TEST(OpFamilies, EveryFamilyIsReadAndKeepsItsOps) {
  EXPECT_TRUE(in_op_family(OpFamily::UndefinedOutput, "empty_like"));
  EXPECT_TRUE(in_op_family(OpFamily::UndefinedOutput, "_resize_output_"));
  EXPECT_TRUE(in_op_family(OpFamily::ValueCopy, "copy_"));
  EXPECT_TRUE(in_op_family(OpFamily::ValueCopy, "_reshape_alias_copy"));   // the last of its row
  EXPECT_TRUE(in_op_family(OpFamily::ValueFill, "zero_"));
  EXPECT_FALSE(in_op_family(OpFamily::ValueCopy, "fill_"));    // a constant is no copy of an input
  EXPECT_FALSE(in_op_family(OpFamily::ValueCopy, "aten::copy_"));   // base names only
  EXPECT_FALSE(in_op_family(OpFamily::UndefinedOutput, "add"));
}

// The shim reads op-families.tsv through the module tools/gen_shim_data.py writes from it.
TEST(OpFamilies, ShimCopyIsCurrent) {
  const fs::path root = NPUD_SOURCE_DIR;
  const std::string tsv = test::file_text(root / "data" / "facts" / "op-families.tsv");
  const std::string py = test::file_text(root / "python" / "npu_doctor" / "_op_families.py");
  const std::string head = "TSV = r\"\"\"";
  const size_t at = py.find(head);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(py.substr(at + head.size()), tsv + "\"\"\"\n") << "run tools/gen_shim_data.py";
}

}  // namespace
}  // namespace npud
