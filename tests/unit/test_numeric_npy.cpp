// The .npy reader on files numpy wrote (tests/data/npy/) and on every kind of bad file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "util/input_error.hpp"
#include "numeric/metrics.hpp"
#include "numeric/npy.hpp"

namespace fs = std::filesystem;
using namespace npud;

namespace {
const fs::path kNpy = fs::path(NPUD_TEST_DATA) / "npy";

std::string npy_bytes(std::string header, std::string data, int major = 1) {
  std::string out = "\x93NUMPY";
  out += char(major);
  out += '\0';
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64) header += ' ';
  header += '\n';
  uint32_t len = uint32_t(header.size());
  out += char(len & 0xff);
  out += char((len >> 8) & 0xff);
  if (major != 1) {
    out += char((len >> 16) & 0xff);
    out += char(len >> 24);
  }
  return out + header + data;
}

// The InputError message for bytes, or "" when they parse.
std::string error_of(const std::string& bytes, uint64_t* offset = nullptr) {
  try {
    parse_npy(bytes, "t.npy");
  } catch (const InputError& e) {
    if (offset) *offset = e.offset();
    return e.describe();
  }
  return "";
}

std::string four_floats() { return std::string(16, '\0'); }
}  // namespace

TEST(NumericNpy, FilesWrittenByNumpy) {
  struct Case { const char* file; DType dtype; bool swapped; bool fortran; std::vector<int64_t> shape; };
  const Case cases[] = {
      {"f2_le.npy", DType::F16, false, false, {2, 3}},   {"f4_be.npy", DType::F32, true, false, {2, 3}},
      {"f8_le.npy", DType::F64, false, false, {2, 3}},   {"f4_fortran.npy", DType::F32, false, true, {2, 3}},
      {"i1.npy", DType::I8, false, false, {5}},          {"u2_be.npy", DType::U16, true, false, {3}},
      {"i8.npy", DType::I64, false, false, {2}},         {"b1.npy", DType::Bool, false, false, {3}},
      {"scalar_f4.npy", DType::F32, false, false, {}},   {"empty_f4.npy", DType::F32, false, false, {0, 4}},
      {"v2_f4.npy", DType::F32, false, false, {4}},      {"v3_f4.npy", DType::F32, false, false, {4}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    MappedNpy m((kNpy / c.file).string());
    EXPECT_EQ(m.header().dtype, c.dtype);
    EXPECT_EQ(m.header().byte_swapped, c.swapped);
    EXPECT_EQ(m.header().fortran_order, c.fortran);
    EXPECT_EQ(m.header().shape, c.shape);
    EXPECT_EQ(read_npy_header((kNpy / c.file).string()).shape, c.shape);
  }
}

TEST(NumericNpy, SameValuesWhateverTheDtypeAndByteOrder) {
  MappedNpy f2((kNpy / "f2_le.npy").string()), f4((kNpy / "f4_be.npy").string()), f8((kNpy / "f8_le.npy").string());
  // [[1, -2.5, 0], [65504, 2^-24, -0]] is exact in all three.
  TensorMetrics a = compute_metrics(f8.view(), f2.view());
  TensorMetrics b = compute_metrics(f8.view(), f4.view());
  EXPECT_EQ(a.max_abs, 0.0);
  EXPECT_EQ(b.max_abs, 0.0);
  EXPECT_EQ(a.finite, 6u);
  EXPECT_DOUBLE_EQ(b.cos, 1.0);
  MappedNpy i1((kNpy / "i1.npy").string());
  EXPECT_EQ(i1.header().count, 5u);
}

TEST(NumericNpy, RefusesObjectArraysWithoutUnpickling) {
  std::string e = error_of(npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", std::string(16, 'x')));
  EXPECT_NE(e.find("object dtype"), std::string::npos) << e;
  EXPECT_NE(e.find("pickle"), std::string::npos) << e;
  EXPECT_NE(e.find("t.npy: byte 20"), std::string::npos) << e;  // points at the descr value
}

TEST(NumericNpy, RefusesUnsupportedDtypes) {
  for (const char* d : {"<c8", "<U4", "|S3", "<M8[ns]", "|V8", "<f16", "<i3", "f4x"}) {
    SCOPED_TRACE(d);
    std::string e = error_of(npy_bytes(std::string("{'descr': '") + d + "', 'fortran_order': False, 'shape': (1,), }",
                                       std::string(16, '\0')));
    EXPECT_NE(e.find("unsupported dtype"), std::string::npos) << e;
  }
  std::string e = error_of(npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "xxxx"));
  EXPECT_NE(e.find("structured"), std::string::npos) << e;
  e = error_of(npy_bytes("{'descr': '|f4', 'fortran_order': False, 'shape': (4,), }", four_floats()));
  EXPECT_NE(e.find("no byte order"), std::string::npos) << e;
}

TEST(NumericNpy, LyingHeadersAndTruncatedFiles) {
  uint64_t offset = 0;
  std::string good = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", four_floats());
  EXPECT_EQ(error_of(good), "");
  std::string e = error_of(good.substr(0, good.size() - 1), &offset);
  EXPECT_NE(e.find("truncated file or lying header"), std::string::npos) << e;
  EXPECT_EQ(offset, good.size() - 16);  // where the data starts
  e = error_of(good + "x");
  EXPECT_NE(e.find("trailing bytes"), std::string::npos) << e;
  e = error_of(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", four_floats()));
  EXPECT_NE(e.find("header says 5 elements"), std::string::npos) << e;
  e = error_of(good.substr(0, 30));
  EXPECT_NE(e.find("truncated .npy file"), std::string::npos) << e;
  e = error_of(good.substr(0, 4));
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  e = error_of("PK\x03\x04 not an npy at all");
  EXPECT_NE(e.find("not a .npy file"), std::string::npos) << e;
  e = error_of(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }", ""));
  EXPECT_NE(e.find("overflows"), std::string::npos) << e;
  e = error_of(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }", ""));
  EXPECT_NE(e.find("overflows"), std::string::npos) << e;
}

TEST(NumericNpy, StrictHeaderSyntax) {
  const char* bad[] = {
      "{'descr': '<f4', 'fortran_order': False}",                          // no shape
      "{'descr': '<f4', 'fortran_order': 0, 'shape': (4,), }",             // not True/False
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}",   // extra key
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), } junk",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [4], }",
      "{'descr': '<f4, 'fortran_order': False, 'shape': (4,), }",
      "__import__('os').system('echo pwned')",
  };
  for (const char* h : bad) {
    SCOPED_TRACE(h);
    EXPECT_NE(error_of(npy_bytes(h, four_floats())), "");
  }
  EXPECT_EQ(error_of(npy_bytes("{\"descr\":\"<f4\",\"shape\":(2,2),\"fortran_order\":True}", four_floats())), "");
  EXPECT_EQ(error_of(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", four_floats(), 2)), "");
  std::string v4 = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", four_floats());
  v4[6] = 4;
  EXPECT_NE(error_of(v4).find("version 4.0"), std::string::npos);
}

TEST(NumericNpy, HeaderLengthLimit) {
  std::string bytes = "\x93NUMPY\x02";
  bytes += '\0';
  uint32_t len = uint32_t(kMaxNpyHeader + 1);
  for (int i = 0; i < 4; ++i) bytes += char((len >> (8 * i)) & 0xff);
  bytes += std::string(len, ' ');
  uint64_t offset = 0;
  std::string e = error_of(bytes, &offset);
  EXPECT_NE(e.find("over the 65536 byte limit"), std::string::npos) << e;
  EXPECT_EQ(offset, 8u);
}

TEST(NumericNpy, MissingEmptyAndDirectoryFiles) {
  fs::path dir = fs::temp_directory_path() / ("npud-npy-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "empty.npy").close();
  for (const fs::path& p : {dir / "missing.npy", dir / "empty.npy", dir}) {
    SCOPED_TRACE(p.string());
    try {
      MappedNpy m(p.string());
      ADD_FAILURE() << "opened";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), p.string());
    }
  }
  fs::remove_all(dir);
}
