// One dtype enum for the model and the tensor readers: each reader maps the spelling its source
// writes ("torch.bool", Kineto's "c10::Half" and "long int", the NPU profiler's "DT_BF16", a
// numpy descr, a torch storage class) to it once, so that rules compare enums, never spellings.
// TensorMeta::dtype keeps the spelling for display.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace npud {

// The order of the first 13 is the element types a tensor dump holds (numeric/); Unknown and
// the complex types come after so that their values stay.
enum class DType : uint8_t {
  F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool,
  Unknown,     // not recorded, or not a tensor dtype ("Scalar", "TensorList", ...)
  C64, C128,
};

// Every spelling of a dtype, case-insensitively after an optional "torch." or "DT_" prefix:
// torch ("float16", "torch.float16"), Kineto "Input type" ("c10::Half", "long int", "double"),
// the NPU profiler ("FLOAT16", "DT_BF16", "DT_BOOL") and short forms ("b8", "bf16", "fp16").
DType parse_dtype(std::string_view spelling);

// Whether a list of dtypes as the NPU profiler writes a task's inputs ("DOUBLE;INT64",
// "FLOAT16,INT32") holds `d`: each entry parsed, so "UINT64" is no int64.
bool has_input_dtype(std::string_view list, DType d);

std::string_view dtype_name(DType d);  // "float16", "bfloat16", "float32", ..., "bool"; "?" if unknown
size_t dtype_size(DType d);            // bytes per element, 0 if unknown

// "float16" / "half" -> "fp16", "bfloat16" -> "bf16", "float32" -> "fp32"; other spellings as written.
std::string short_dtype(std::string_view spelling);

}  // namespace npud
