// model/dtype: every spelling the readers meet maps to one enum, which rules compare.
#include <gtest/gtest.h>

#include "model/dtype.hpp"
#include "model/trace.hpp"

namespace npud {
namespace {

TEST(Dtype, EverySpellingMapsToOneEnum) {
  for (auto s : {"bool", "torch.bool", "Bool", "b8", "DT_BOOL"}) EXPECT_EQ(parse_dtype(s), DType::Bool) << s;
  for (auto s : {"float16", "torch.float16", "Half", "DT_FLOAT16", "c10::Half", "FLOAT16", "fp16"})
    EXPECT_EQ(parse_dtype(s), DType::F16) << s;
  for (auto s : {"bfloat16", "torch.bfloat16", "BFloat16", "c10::BFloat16", "DT_BF16", "bf16"})
    EXPECT_EQ(parse_dtype(s), DType::BF16) << s;
  for (auto s : {"float32", "float", "torch.float32", "DT_FLOAT", "Float"}) EXPECT_EQ(parse_dtype(s), DType::F32) << s;
  for (auto s : {"float64", "double", "torch.float64", "DT_DOUBLE"}) EXPECT_EQ(parse_dtype(s), DType::F64) << s;
  for (auto s : {"int64", "long", "long int", "torch.int64", "INT64", "DT_INT64"})
    EXPECT_EQ(parse_dtype(s), DType::I64) << s;
  for (auto s : {"int32", "int", "torch.int32"}) EXPECT_EQ(parse_dtype(s), DType::I32) << s;
  for (auto s : {"", "Scalar", "TensorList", "ScalarType", "c10::complex<float>"})
    EXPECT_EQ(parse_dtype(s), DType::Unknown) << s;
}

// FALLBACK001 says "float64 inputs" / "int64 inputs" from kernel_details.csv's Input Data Types.
TEST(Dtype, InputDtypeListsAreReadEntryByEntry) {
  EXPECT_TRUE(has_input_dtype("DOUBLE;INT64", DType::F64));
  EXPECT_TRUE(has_input_dtype("FLOAT; INT64", DType::I64));
  EXPECT_TRUE(has_input_dtype("FLOAT16,DT_DOUBLE", DType::F64));
  EXPECT_FALSE(has_input_dtype("UINT64;FLOAT", DType::I64));   // a substring search said int64
  EXPECT_FALSE(has_input_dtype("", DType::F64));
  EXPECT_FALSE(has_input_dtype(";;", DType::F64));
}

TEST(Dtype, SizesAndNames) {
  EXPECT_EQ(dtype_size(DType::Bool), 1u);
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
  EXPECT_EQ(dtype_size(DType::F32), 4u);
  EXPECT_EQ(dtype_size(DType::I64), 8u);
  EXPECT_EQ(dtype_size(DType::C128), 16u);
  EXPECT_EQ(dtype_size(DType::Unknown), 0u);
  EXPECT_EQ(dtype_size("c10::Half"), 2u);   // the spelling form reads through the enum
  EXPECT_EQ(dtype_name(DType::BF16), "bfloat16");
  EXPECT_EQ(short_dtype("float16"), "fp16");
  EXPECT_EQ(short_dtype("half"), "fp16");
  EXPECT_EQ(short_dtype("bfloat16"), "bf16");
  EXPECT_EQ(short_dtype("float32"), "fp32");
  EXPECT_EQ(short_dtype("int8"), "int8");
}

}  // namespace
}  // namespace npud
