#include "model/dtype.hpp"

#include <cctype>
#include <initializer_list>

namespace npud {

DType parse_dtype(std::string_view d) {
  if (d.starts_with("torch.")) d.remove_prefix(6);
  if (d.starts_with("DT_")) d.remove_prefix(3);
  auto is = [&](std::initializer_list<std::string_view> names) {
    for (auto n : names) {
      if (d.size() != n.size()) continue;
      bool eq = true;
      for (size_t i = 0; i < n.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(d[i])) != n[i]) { eq = false; break; }
      if (eq) return true;
    }
    return false;
  };
  if (is({"float32", "float", "fp32"})) return DType::F32;
  if (is({"float16", "half", "c10::half", "fp16"})) return DType::F16;
  if (is({"bfloat16", "bf16", "c10::bfloat16"})) return DType::BF16;
  if (is({"int64", "long", "long int"})) return DType::I64;
  if (is({"int32", "int"})) return DType::I32;
  if (is({"bool", "b8"})) return DType::Bool;
  if (is({"float64", "double"})) return DType::F64;
  if (is({"int8", "signed char", "char"})) return DType::I8;
  if (is({"uint8", "unsigned char"})) return DType::U8;
  if (is({"int16", "short"})) return DType::I16;
  if (is({"uint32", "unsigned int"})) return DType::U32;
  if (is({"uint16"})) return DType::U16;
  if (is({"uint64"})) return DType::U64;
  if (is({"complex64", "cfloat"})) return DType::C64;
  if (is({"complex128", "cdouble"})) return DType::C128;
  return DType::Unknown;
}

std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    case DType::I8: return "int8";
    case DType::I16: return "int16";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::U8: return "uint8";
    case DType::U16: return "uint16";
    case DType::U32: return "uint32";
    case DType::U64: return "uint64";
    case DType::Bool: return "bool";
    case DType::C64: return "complex64";
    case DType::C128: return "complex128";
    case DType::Unknown: break;
  }
  return "?";
}

size_t dtype_size(DType d) {
  switch (d) {
    case DType::I8: case DType::U8: case DType::Bool: return 1;
    case DType::F16: case DType::BF16: case DType::I16: case DType::U16: return 2;
    case DType::F32: case DType::I32: case DType::U32: return 4;
    case DType::F64: case DType::I64: case DType::U64: case DType::C64: return 8;
    case DType::C128: return 16;
    case DType::Unknown: break;
  }
  return 0;
}

std::string short_dtype(std::string_view spelling) {
  switch (parse_dtype(spelling)) {
    case DType::F16: return "fp16";
    case DType::BF16: return "bf16";
    case DType::F32: return "fp32";
    default: return std::string(spelling);
  }
}

bool has_input_dtype(std::string_view list, DType d) {
  while (!list.empty()) {
    size_t end = list.find_first_of(";,");
    std::string_view entry = list.substr(0, end);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    if (parse_dtype(entry) == d) return true;
    if (end == std::string_view::npos) break;
    list.remove_prefix(end + 1);
  }
  return false;
}

}  // namespace npud
