// The .pt reader: the restricted pickle VM on hand-built pickles (what torch writes, and what
// it refuses: other globals, other calls, other opcodes, hostile shapes), and the stored zip
// around it. Files written by torch itself are read in tests/e2e/test_compare_pt.py.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "util/input_error.hpp"
#include "numeric/pt.hpp"
#include "numeric/stored_zip.hpp"
#include "numeric/torch_pickle.hpp"

using namespace npud;

namespace {

// A pickle, opcode by opcode (protocol 2, as torch.save writes it).
struct Pickle {
  std::string s = std::string("\x80\x02", 2);
  Pickle& op(char c) { s += c; return *this; }
  Pickle& raw(std::string_view b) { s += b; return *this; }
  Pickle& str(std::string_view v) {  // BINUNICODE
    s += 'X';
    for (int i = 0; i < 4; ++i) s += char((v.size() >> (8 * i)) & 0xff);
    s += v;
    return *this;
  }
  Pickle& global(std::string_view module, std::string_view name) {
    s += 'c';
    s += module;
    s += '\n';
    s += name;
    s += '\n';
    return *this;
  }
  Pickle& int1(int v) { s += 'K'; s += char(v); return *this; }
  Pickle& int4(int32_t v) {
    s += 'J';
    for (int i = 0; i < 4; ++i) s += char((uint32_t(v) >> (8 * i)) & 0xff);
    return *this;
  }
  Pickle& ints(const std::vector<int>& v) {  // a tuple of small ints
    op('(');
    for (int x : v) int1(x);
    return op('t');
  }
  // A rebuild call up to its backward hooks: fn(storage, offset, shape, stride, False,
  // OrderedDict() — the caller adds any further argument, then closes it with call().
  Pickle& rebuild(std::string_view fn, std::string_view storage_class, std::string_view key, int numel, int offset,
                  const std::vector<int>& shape, const std::vector<int>& stride) {
    size_t dot = fn.rfind('.'), sdot = storage_class.rfind('.');
    global(fn.substr(0, dot), fn.substr(dot + 1)).op('(');
    op('(').str("storage").global(storage_class.substr(0, sdot), storage_class.substr(sdot + 1)).str(key).str("cpu");
    int4(numel).op('t').op('Q');
    int4(offset).ints(shape).ints(stride).op('\x89');
    return global("collections", "OrderedDict").op(')').op('R');
  }
  Pickle& call() { return op('t').op('R'); }
  // torch's _rebuild_tensor_v2 call, as torch 1.13 and 2.x write it.
  Pickle& tensor(std::string_view storage_class, std::string_view key, int numel, int offset,
                 const std::vector<int>& shape, const std::vector<int>& stride) {
    return rebuild("torch._utils._rebuild_tensor_v2", "torch." + std::string(storage_class), key, numel, offset, shape,
                   stride)
        .call();
  }
  std::string stop() { return s + '.'; }
};

std::string error_of(const std::string& pickle, uint64_t* offset = nullptr) {
  try {
    read_torch_pickle(pickle, "t.pt");
  } catch (const InputError& e) {
    if (offset) *offset = e.offset();
    return e.what();
  }
  return "";
}

// A stored zip archive as torch.save writes it (no alignment padding: the reader needs none);
// zip64: sizes and offsets saturated in the central directory and given in zip64 extra
// fields, and a zip64 end record with its locator, as writers do past 4 GiB.
std::string zip(const std::vector<std::pair<std::string, std::string>>& files, uint16_t method = 0,
                bool zip64 = false) {
  auto le = [](std::string& o, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) o += char((v >> (8 * i)) & 0xff);
  };
  const uint64_t sat = zip64 ? 0xffffffff : 0;
  std::string out, cd;
  for (const auto& [name, data] : files) {
    uint64_t at = out.size();
    le(out, 0x04034b50, 4); le(out, 20, 2); le(out, 0, 2); le(out, method, 2); le(out, 0, 4); le(out, 0, 4);
    le(out, data.size(), 4); le(out, data.size(), 4); le(out, name.size(), 2); le(out, 0, 2);
    out += name + data;
    le(cd, 0x02014b50, 4); le(cd, 45, 2); le(cd, 45, 2); le(cd, 0, 2); le(cd, method, 2); le(cd, 0, 4); le(cd, 0, 4);
    le(cd, sat ? sat : data.size(), 4); le(cd, sat ? sat : data.size(), 4); le(cd, name.size(), 2);
    le(cd, zip64 ? 28 : 0, 2); le(cd, 0, 2); le(cd, 0, 2); le(cd, 0, 2); le(cd, 0, 4); le(cd, sat ? sat : at, 4);
    cd += name;
    if (zip64) {
      le(cd, 1, 2); le(cd, 24, 2); le(cd, data.size(), 8); le(cd, data.size(), 8); le(cd, at, 8);
    }
  }
  uint64_t cd_at = out.size();
  out += cd;
  if (zip64) {
    uint64_t end64 = out.size();
    le(out, 0x06064b50, 4); le(out, 44, 8); le(out, 45, 2); le(out, 45, 2); le(out, 0, 4); le(out, 0, 4);
    le(out, files.size(), 8); le(out, files.size(), 8); le(out, cd.size(), 8); le(out, cd_at, 8);
    le(out, 0x07064b50, 4); le(out, 0, 4); le(out, end64, 8); le(out, 1, 4);
  }
  le(out, 0x06054b50, 4); le(out, 0, 2); le(out, 0, 2); le(out, zip64 ? 0xffff : files.size(), 2);
  le(out, zip64 ? 0xffff : files.size(), 2); le(out, zip64 ? sat : cd.size(), 4); le(out, zip64 ? sat : cd_at, 4);
  le(out, 0, 2);
  return out;
}

std::string floats(std::vector<float> v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4); }

}  // namespace

TEST(NumericPtPickle, LoneTensorAsTorchWritesIt) {
  TorchPickle p = read_torch_pickle(Pickle().tensor("FloatStorage", "0", 12, 0, {3, 4}, {4, 1}).stop(), "t.pt");
  ASSERT_EQ(p.tensors.size(), 1u);
  const PickledTensor& t = p.tensors[0];
  EXPECT_EQ(t.name, "");
  EXPECT_EQ(t.dtype, DType::F32);
  EXPECT_EQ(t.storage_key, "0");
  EXPECT_EQ(t.storage_bytes, 48u);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(t.count, 12u);
  EXPECT_TRUE(t.contiguous());
}

TEST(NumericPtPickle, DictOfViewsAndAParameter) {
  // {'a': x, 'b': x.t(), 'c': x[1:, 2:]} and an OrderedDict holding a Parameter of bf16,
  // with the memo (BINPUT/BINGET) torch uses for repeated names.
  Pickle p;
  p.op('}').op('q').raw(std::string(1, '\0')).op('(');
  p.str("a").tensor("FloatStorage", "0", 12, 0, {3, 4}, {4, 1});
  p.str("b").tensor("FloatStorage", "0", 12, 0, {4, 3}, {1, 4});
  p.str("c").tensor("FloatStorage", "0", 12, 6, {2, 2}, {4, 1});
  p.str("w").global("torch._utils", "_rebuild_parameter");
  p.tensor("BFloat16Storage", "1", 4, 0, {4}, {1}).op('\x88').global("collections", "OrderedDict").op(')').op('R');
  p.op('\x87').op('R');
  p.op('u');
  TorchPickle r = read_torch_pickle(p.stop(), "t.pt");
  ASSERT_EQ(r.tensors.size(), 4u);
  EXPECT_EQ(r.tensors[1].name, "b");
  EXPECT_FALSE(r.tensors[1].contiguous());
  EXPECT_FALSE(r.tensors[2].contiguous());
  EXPECT_EQ(r.tensors[2].storage_offset, 6u);
  EXPECT_EQ(r.tensors[2].span_bytes, (4u + 1u + 1u) * 4u);  // elements 6..11 of the storage
  EXPECT_EQ(r.tensors[3].name, "w");
  EXPECT_EQ(r.tensors[3].dtype, DType::BF16);
  EXPECT_EQ(r.tensors[3].storage_bytes, 8u);
}

TEST(NumericPtPickle, RebuildV3WithADtype) {
  Pickle p;
  p.rebuild("torch._utils._rebuild_tensor_v3", "torch.storage.UntypedStorage", "0", 8, 0, {4}, {1});
  p.global("torch", "uint16").call();
  TorchPickle r = read_torch_pickle(p.stop(), "t.pt");
  ASSERT_EQ(r.tensors.size(), 1u);
  EXPECT_EQ(r.tensors[0].dtype, DType::U16);
  EXPECT_EQ(r.tensors[0].storage_bytes, 8u);
}

TEST(NumericPtPickle, DtypesNotComparedAreReadWithTheirSizes) {
  // complex64 through a typed storage (8 bytes an element), float8 through v3 (1 byte).
  TorchPickle r = read_torch_pickle(Pickle().tensor("ComplexFloatStorage", "0", 6, 0, {2, 3}, {3, 1}).stop(), "t.pt");
  ASSERT_EQ(r.tensors.size(), 1u);
  EXPECT_EQ(r.tensors[0].uncompared_dtype, "complex64");
  EXPECT_EQ(r.tensors[0].storage_bytes, 48u);
  EXPECT_NE(error_of(Pickle().tensor("ComplexFloatStorage", "0", 5, 0, {2, 3}, {3, 1}).stop()).find("reaches byte 48"),
            std::string::npos);
  Pickle p;
  p.rebuild("torch._utils._rebuild_tensor_v3", "torch.storage.UntypedStorage", "0", 4, 0, {4}, {1});
  p.global("torch", "float8_e4m3fn").call();
  r = read_torch_pickle(p.stop(), "t.pt");
  EXPECT_EQ(r.tensors[0].uncompared_dtype, "float8_e4m3fn");
  EXPECT_EQ(r.tensors[0].element_bytes, 1u);
  EXPECT_EQ(r.tensors[0].span_bytes, 4u);
}

TEST(NumericPtPickle, TensorSavedOnAnNpu) {
  // torch_npu's Tensor.__reduce_ex__ on an NPU tensor (what msprobe's save_pt writes on Ascend):
  // _rebuild_tensor_v2's arguments for the CPU copy plus the NPU format, an IntEnum (2 = ND).
  const char* fn = "torch_npu.utils.storage._rebuild_npu_tensor";
  Pickle p;
  p.rebuild(fn, "torch.HalfStorage", "0", 6, 0, {2, 3}, {3, 1});
  p.global("torch_npu.npu._format", "Format").int1(2).op('\x85').op('R').call();
  TorchPickle r = read_torch_pickle(p.stop(), "t.pt");
  ASSERT_EQ(r.tensors.size(), 1u);
  EXPECT_EQ(r.tensors[0].dtype, DType::F16);
  EXPECT_EQ(r.tensors[0].shape, (std::vector<int64_t>{2, 3}));
  // Python 3.11.0-3.11.4 pickle the enum member by name, getattr(Format, 'ND'); getattr on
  // anything else is refused.
  Pickle by_name;
  by_name.rebuild(fn, "torch.HalfStorage", "0", 6, 0, {2, 3}, {3, 1});
  by_name.global("__builtin__", "getattr").global("torch_npu.npu._format", "Format").str("ND").op('\x86').op('R');
  by_name.call();
  EXPECT_EQ(read_torch_pickle(by_name.stop(), "t.pt").tensors.size(), 1u);
  EXPECT_NE(error_of(Pickle().global("builtins", "getattr").global("os", "path").stop()).find("GLOBAL 'os path'"),
            std::string::npos);
  EXPECT_NE(error_of(Pickle().global("builtins", "getattr").global("torch", "FloatStorage").str("x").op('\x86').op('R').stop())
                .find("getattr called on other than"),
            std::string::npos);
  // Anything but an int as the format is refused.
  Pickle bad;
  bad.global("torch_npu.npu._format", "Format").str("x").op('\x85').op('R');
  EXPECT_NE(error_of(bad.stop()).find("Format called with other than one int"), std::string::npos);
}

TEST(NumericPtPickle, HostileGlobalsAreRefusedWhereTheyStand) {
  // os.system('touch x'): refused at the GLOBAL, before anything could be called.
  uint64_t at = 0;
  std::string e = error_of(Pickle().global("os", "system").str("touch x").op('\x85').op('R').stop(), &at);
  EXPECT_EQ(at, 2u);
  EXPECT_NE(e.find("GLOBAL 'os system'"), std::string::npos) << e;
  EXPECT_NE(e.find("nothing in it was run"), std::string::npos) << e;
  EXPECT_NE(e.find("data.pkl byte 2"), std::string::npos) << e;
  // builtins.eval via STACK_GLOBAL (protocol 4), after a harmless tensor.
  Pickle p;
  p.op('(').tensor("FloatStorage", "0", 1, 0, {}, {});
  size_t stack_global = p.s.size() + 16;  // after the two SHORT_BINUNICODEs
  p.raw("\x8c\x08" "builtins" "\x8c\x04" "eval").op('\x93');
  e = error_of(p.stop(), &at);
  EXPECT_EQ(at, stack_global);
  EXPECT_NE(e.find("GLOBAL 'builtins eval'"), std::string::npos) << e;
  // A name that looks like torch's but is not one of the rebuild functions.
  e = error_of(Pickle().global("torch._utils", "_rebuild_from_type_v2").stop());
  EXPECT_NE(e.find("torch._utils _rebuild_from_type_v2"), std::string::npos) << e;
  e = error_of(Pickle().global("torch", "load").stop());
  EXPECT_NE(e.find("GLOBAL 'torch load'"), std::string::npos) << e;
}

TEST(NumericPtPickle, OnlyTheRebuildFunctionsAreCalled) {
  // REDUCE on a storage class, on a dtype, on a string; OrderedDict with arguments.
  EXPECT_NE(error_of(Pickle().global("torch", "FloatStorage").op(')').op('R').stop()).find("REDUCE calls a storage"),
            std::string::npos);
  EXPECT_NE(error_of(Pickle().str("x").op(')').op('R').stop()).find("REDUCE calls a string"), std::string::npos);
  EXPECT_NE(error_of(Pickle().global("collections", "OrderedDict").int1(1).op('\x85').op('R').stop())
                .find("with arguments"),
            std::string::npos);
  // BUILD, INST, NEWOBJ and persistent ids that are not torch's storage tuples.
  uint64_t at = 0;
  std::string e = error_of(Pickle().op('}').op('}').op('b').stop(), &at);
  EXPECT_EQ(at, 4u);
  EXPECT_NE(e.find("opcode 0x62 ('b')"), std::string::npos) << e;
  EXPECT_NE(error_of(Pickle().str("x").op('Q').stop()).find("persistent id"), std::string::npos);
  EXPECT_NE(error_of(Pickle().raw("P0\n").stop()).find("opcode 0x50"), std::string::npos);
}

TEST(NumericPtPickle, ShapesAreBoundedByTheStorage) {
  std::string e = error_of(Pickle().tensor("FloatStorage", "0", 12, 4, {3, 4}, {4, 1}).stop());
  EXPECT_NE(e.find("reaches byte 64 of a storage of 48 bytes"), std::string::npos) << e;
  // Stride 0 over one element is a legal (expanded) view; a huge extent overflows.
  TorchPickle r = read_torch_pickle(Pickle().tensor("FloatStorage", "0", 1, 0, {100, 100}, {0, 0}).stop(), "t.pt");
  EXPECT_EQ(r.tensors[0].count, 10000u);
  EXPECT_FALSE(r.tensors[0].contiguous());
  Pickle big;
  big.global("torch._utils", "_rebuild_tensor_v2").op('(');
  big.op('(').str("storage").global("torch", "FloatStorage").str("0").str("cpu").int1(1).op('t').op('Q');
  big.int1(0).op('(').raw("\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f").int1(2).op('t').ints({1, 1}).op('\x89');
  big.op('}').op('t').op('R');
  e = error_of(big.stop());
  EXPECT_NE(e.find("overflows 64 bits"), std::string::npos) << e;
  EXPECT_NE(error_of(Pickle().tensor("FloatStorage", "../x", 1, 0, {}, {}).stop()).find("not a file name"),
            std::string::npos);
}

TEST(NumericPtPickle, MalformedAndHostileStructure) {
  EXPECT_NE(error_of(Pickle().op('}').s).find("ends before its STOP"), std::string::npos);
  EXPECT_NE(error_of(Pickle().op('h').raw(std::string(1, '\x07')).stop()).find("memo slot 7"), std::string::npos);
  EXPECT_NE(error_of(Pickle().op('}').op('r').raw("\xff\xff\xff\x7f").stop()).find("memo index"), std::string::npos);
  EXPECT_NE(error_of(Pickle().op('t').stop()).find("MARK it never opened"), std::string::npos);
  EXPECT_NE(error_of(Pickle().op('a').stop()).find("empty stack"), std::string::npos);
  EXPECT_NE(error_of(Pickle().str("x").str("y").op('a').stop()).find("APPEND(S) on a string"), std::string::npos);
  EXPECT_NE(error_of(std::string("\x80\x01.", 3)).find("pickle protocol 1"), std::string::npos);
  EXPECT_NE(error_of(Pickle().raw("X\xff\xff\xff\x7f").s).find("truncated"), std::string::npos);
  // A list holding itself: walking it must end.
  std::string self = Pickle().op(']').op('q').raw(std::string(1, '\0')).op('h').raw(std::string(1, '\0')).op('a').stop();
  EXPECT_NE(error_of(self).find("nested deeper"), std::string::npos);
  // (x, x) nested 40 times: 2^40 paths through 41 objects.
  const std::string memo0(1, '\0');
  Pickle fan;
  fan.op(']').op('q').raw(memo0);
  for (int i = 0; i < 40; ++i) fan.op('h').raw(memo0).op('h').raw(memo0).op('\x86').op('q').raw(memo0);
  std::string e = error_of(fan.stop());
  EXPECT_NE(e.find("shared references"), std::string::npos) << e;
  // A name nested past 4 KiB: {k: {k: ... tensor}} with one 1000-byte key.
  Pickle deep;
  deep.op('}').str(std::string(1000, 'k')).op('q').raw(memo0);
  for (int i = 0; i < 5; ++i) deep.op('}').op('h').raw(memo0);
  deep.tensor("FloatStorage", "0", 1, 0, {}, {});
  for (int i = 0; i < 5; ++i) deep.op('s');
  deep.op('s');
  e = error_of(deep.stop());
  EXPECT_NE(e.find("longer than 4096 bytes"), std::string::npos) << e;
}

TEST(NumericPtFile, ZipAroundThePickle) {
  std::string pkl = Pickle().tensor("FloatStorage", "0", 3, 0, {3}, {1}).stop();
  std::string f = zip({{"m/data.pkl", pkl}, {"m/byteorder", "little"}, {"m/data/0", floats({1, 2, 3})},
                       {"m/version", "3\n"}});
  PtContents c = parse_pt(f, "m.pt");
  ASSERT_EQ(c.tensors.size(), 1u);
  EXPECT_FALSE(c.byte_swapped);
  std::vector<char> copy;
  TensorView v = pt_view(f, c, 0, copy, "m.pt");
  float second;
  std::memcpy(&second, static_cast<const char*>(v.data) + 4, 4);
  EXPECT_EQ(second, 2.0f);
  EXPECT_TRUE(copy.empty());

  // A transposed view is gathered in C order.
  std::string t = Pickle().tensor("FloatStorage", "0", 6, 0, {3, 2}, {1, 3}).stop();
  f = zip({{"m/data.pkl", t}, {"m/data/0", floats({1, 2, 3, 4, 5, 6})}});
  c = parse_pt(f, "m.pt");
  v = pt_view(f, c, 0, copy, "m.pt");
  std::vector<float> got(6);
  std::memcpy(got.data(), v.data, 24);
  EXPECT_EQ(got, (std::vector<float>{1, 4, 2, 5, 3, 6}));

  EXPECT_TRUE(parse_pt(zip({{"m/data.pkl", pkl}, {"m/byteorder", "big"}, {"m/data/0", floats({1, 2, 3})}}), "m.pt")
                  .byte_swapped);

  // zip64 records (what a writer emits past 4 GiB) give the same entries.
  f = zip({{"m/data.pkl", t}, {"m/data/0", floats({1, 2, 3, 4, 5, 6})}}, 0, true);
  c = parse_pt(f, "m.pt");
  ASSERT_EQ(c.tensors.size(), 1u);
  v = pt_view(f, c, 0, copy, "m.pt");
  std::memcpy(got.data(), v.data, 24);
  EXPECT_EQ(got, (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(NumericPtFile, RefusedFiles) {
  auto error = [](const std::string& bytes) {
    try {
      parse_pt(bytes, "m.pt");
    } catch (const InputError& e) {
      return e.describe();
    }
    return std::string();
  };
  std::string pkl = Pickle().tensor("FloatStorage", "0", 3, 0, {3}, {1}).stop();
  EXPECT_NE(error(std::string("\x80\x02\x8a\x0a", 4)).find("legacy torch.save file"), std::string::npos);
  EXPECT_NE(error("hello").find("not a torch.save file"), std::string::npos);
  EXPECT_NE(error(zip({{"m/data.pkl", pkl}, {"m/data/0", floats({1, 2})}})).find("holds 8 bytes, but data.pkl says 12"),
            std::string::npos);
  EXPECT_NE(error(zip({{"m/data.pkl", pkl}})).find("lacks (no m/data/0)"), std::string::npos);
  EXPECT_NE(error(zip({{"m/data.pkl", pkl}, {"m/data/0", floats({1, 2, 3})}}, 8)).find("compressed (method 8)"),
            std::string::npos);
  EXPECT_NE(error(zip({{"m/byteorder", "middle"}})).find("byteorder"), std::string::npos);
  EXPECT_NE(error(zip({{"m/version", "3"}})).find("no m/data.pkl"), std::string::npos);
  std::string lying = zip({{"m/data.pkl", pkl}});
  lying[lying.size() - 12] = lying[lying.size() - 14] = '\xff';  // the end record claims 255 entries
  EXPECT_NE(error(lying).find("claims 255 entries"), std::string::npos) << error(lying);
  std::string cut = zip({{"m/data.pkl", pkl}, {"m/data/0", floats({1, 2, 3})}});
  EXPECT_NE(error(cut.substr(0, cut.size() - 30)).find("zip"), std::string::npos);
  // The offset of a hostile GLOBAL is the file's byte: data.pkl's data starts after its local header.
  std::string evil = Pickle().global("posix", "system").str("touch x").op('\x85').op('R').stop();
  std::string e = error(zip({{"m/data.pkl", evil}}));
  EXPECT_NE(e.find("m.pt: byte " + std::to_string(30 + 10 + 2) + ":"), std::string::npos) << e;
  EXPECT_NE(e.find("GLOBAL 'posix system'"), std::string::npos) << e;
}
