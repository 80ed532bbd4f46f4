// The limits of ingest/limits.hpp (docs/security.md), one test each: strings, stack depth,
// tensor rank and element count, times out of the int64 ns range, CSV field and record
// sizes. Refusals are InputErrors naming the file and the byte offset; what is dropped
// instead (stack frames, shapes) leaves one warning with the offset of its first case.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ingest/ascend.hpp"
#include "ingest/byte_source.hpp"
#include "ingest/chrome_json.hpp"
#include "ingest/csv.hpp"
#include "util/input_error.hpp"
#include "ingest/limits.hpp"

namespace fs = std::filesystem;
using namespace npud;

namespace {

InputError json_error(const std::string& json) {
  try {
    read_chrome_json_buffer(json, "bad.json", {});
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError for: " << json.substr(0, 200);
  return InputError("", 0, "");
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const Warning* warning_with(const Trace& t, const std::string& part) {
  for (const Warning& w : t.warnings)
    if (contains(w.message, part)) return &w;
  return nullptr;
}

// An aten op event with the given "args" body.
std::string op_event(const std::string& args, int64_t ts = 1) {
  return R"({"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":)" + std::to_string(ts) +
         R"(,"dur":1,"args":{)" + args + "}}";
}

struct TempCsv {
  fs::path path;
  explicit TempCsv(const std::string& text) {
    path = fs::temp_directory_path() / ("npud_limits_" + std::to_string(::getpid()) + "_kernel_details.csv");
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempCsv() { fs::remove(path); }
};

InputError csv_file_error(const std::string& text) {
  TempCsv f(text);
  try {
    read_ascend(f.path.string(), {});
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), f.path.string());
    return e;
  }
  ADD_FAILURE() << "no InputError for: " << text.substr(0, 200);
  return InputError("", 0, "");
}

const std::string kCsvHeader = "Name,Start Time(us),Duration(us),Accelerator Core\n";

}  // namespace

TEST(HostileLimits, LongStringsAreRefused) {
  const std::string big(limits::kMaxStringBytes + 1, 'n');
  const std::string first = "[" + op_event("\"seq\":1") + ",\n";
  std::string json = first + R"({"ph":"X","cat":"cpu_op","name":")" + big + R"(","ts":2,"dur":1}])";
  InputError e = json_error(json);
  EXPECT_EQ(e.file(), "bad.json");
  EXPECT_EQ(e.offset(), first.size());  // the event (simdjson hands over strings unescaped, elsewhere)
  EXPECT_TRUE(contains(e.what(), "event #1: \"name\" is 1048577 bytes long, over the 1 MiB limit")) << e.what();
  // a kept arg string too
  json = "[" + op_event("\"Call stack\":\"" + big + "\"") + "]";
  e = json_error(json);
  EXPECT_EQ(e.offset(), 1u);
  EXPECT_TRUE(contains(e.what(), "\"Call stack\" is 1048577 bytes")) << e.what();
  // a capture stack is kept as raw JSON text, inside the event: the error points at it
  json = "[" + op_event("\"stack\":[[\"" + big + "\",1,\"f\"]]") + "]";
  e = json_error(json);
  EXPECT_EQ(e.offset(), json.find("[[\""));
  EXPECT_TRUE(contains(e.what(), "event #0: \"stack\" is 1048589 bytes long, over the 1 MiB limit")) << e.what();
  // a long string npu-doctor does not keep is fine, and so is one at the limit
  EXPECT_NO_THROW(read_chrome_json_buffer("[" + op_event("\"junk\":\"" + big + "\"") + "]", "ok.json", {}));
  const std::string at_limit(limits::kMaxStringBytes, 'n');
  EXPECT_NO_THROW(read_chrome_json_buffer(
      R"([{"ph":"X","cat":"cpu_op","name":")" + at_limit + R"(","ts":2,"dur":1}])", "ok.json", {}));
}

TEST(HostileLimits, DeepLegacyCallStackIsCut) {
  std::string stack;
  for (int i = 0; i < 5000; ++i) stack += "user.py(" + std::to_string(i + 1) + "): f" + std::to_string(i) + ";";
  const std::string first = "[" + op_event("\"seq\":1") + ",\n";
  std::string json = first + op_event("\"Call stack\":\"" + stack + "\"") + "]";
  Trace t = read_chrome_json_buffer(json, "deep.json", {});
  ASSERT_EQ(t.ops.size(), 2u);
  auto frames = t.frames_of(t.ops[1].stack);
  ASSERT_EQ(frames.size(), limits::kMaxStackFrames);
  EXPECT_EQ(t.frames[frames[0]].line, 1);  // innermost kept
  const Warning* w = warning_with(t, "1 call stacks are deeper than 1024 frames");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->offset, first.size());  // the second event
}

TEST(HostileLimits, DeepCaptureStackIsCut) {
  std::string frames = "[";
  for (int i = 0; i < 3000; ++i) frames += (i ? "," : "") + std::string("[\"train.py\",") + std::to_string(i + 1) + ",\"f\"]";
  frames += "]";
  std::string json = "[" + op_event("\"stack\":" + frames) + "]";
  Trace t = read_chrome_json_buffer(json, "deep.json", {});
  ASSERT_EQ(t.ops.size(), 1u);
  auto kept = t.frames_of(t.ops[0].stack);
  ASSERT_EQ(kept.size(), limits::kMaxStackFrames);
  EXPECT_EQ(t.frames[kept.front()].line, 1);
  EXPECT_EQ(t.frames[kept.back()].line, int32_t(limits::kMaxStackFrames));
  EXPECT_NE(warning_with(t, "deeper than 1024 frames"), nullptr);
}

TEST(HostileLimits, AbsurdRankDropsTheShape) {
  std::string dims = "[";
  for (int i = 0; i < 300; ++i) dims += (i ? ",1" : "1");
  dims += "]";
  std::string json = "[" + op_event("\"Input Dims\":[[2,3]," + dims + "],\"Input type\":[\"float\",\"float\"]") + "]";
  Trace t = read_chrome_json_buffer(json, "rank.json", {});
  ASSERT_EQ(t.ops.size(), 1u);
  auto in = t.inputs(t.ops[0]);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_TRUE(t.tensors[in[0]].has_shape);
  EXPECT_EQ(t.tensors[in[0]].rank, 2);
  EXPECT_TRUE(t.tensors[in[1]].is_tensor);  // the tensor stays, without a shape
  EXPECT_FALSE(t.tensors[in[1]].has_shape);
  const Warning* w = warning_with(t, "1 tensor shapes dropped: rank over 255 or more than 2^59 elements");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->offset, 1u);
  // rank 255 is kept
  std::string ok = "[";
  for (int i = 0; i < 255; ++i) ok += (i ? ",1" : "1");
  ok += "]";
  t = read_chrome_json_buffer("[" + op_event("\"Input Dims\":[" + ok + "],\"Input type\":[\"float\"]") + "]",
                              "ok.json", {});
  EXPECT_TRUE(t.tensors[t.inputs(t.ops[0])[0]].has_shape);
  EXPECT_TRUE(t.warnings.empty());
}

TEST(HostileLimits, ShapeProductOverflowDropsTheShape) {
  // 2^32 * 2^32 overflows int64 elements; 2^30 * 2^30 = 2^60 is over the 2^59 limit;
  // 2^29 * 2^30 = 2^59 is at it. Zero sizes do not count, so a zero-size tensor whose other
  // sizes multiply past the limit is dropped too (stride arithmetic would overflow on it).
  std::string json = "[" +
                     op_event(R"("Input Dims":[[4294967296,4294967296],[1073741824,1073741824],)"
                              R"([536870912,1073741824],[0,9223372036854775807,9223372036854775807],)"
                              R"([-9223372036854775807,-9223372036854775807],[0,1024]],)"
                              R"("Input type":["float","float","float","float","float","float"])") +
                     "]";
  Trace t = read_chrome_json_buffer(json, "numel.json", {});
  auto in = t.inputs(t.ops[0]);
  ASSERT_EQ(in.size(), 6u);
  EXPECT_FALSE(t.tensors[in[0]].has_shape);
  EXPECT_FALSE(t.tensors[in[1]].has_shape);
  EXPECT_TRUE(t.tensors[in[2]].has_shape);
  EXPECT_EQ(numel(t.shape(t.tensors[in[2]])), int64_t(1) << 59);
  EXPECT_FALSE(t.tensors[in[3]].has_shape);
  EXPECT_FALSE(t.tensors[in[4]].has_shape);
  EXPECT_TRUE(t.tensors[in[5]].has_shape);
  EXPECT_EQ(numel(t.shape(t.tensors[in[5]])), 0);
  EXPECT_NE(warning_with(t, "4 tensor shapes dropped"), nullptr);
  // capture tensors go through the same check
  std::string cap = "[" +
                    op_event(R"("inputs":[{"id":1,"dtype":"float32","shape":[4294967296,4294967296],)"
                             R"("strides":[4294967296,1]},{"id":2,"dtype":"float32","shape":[2,2],"strides":[2,1]}])") +
                    "]";
  t = read_chrome_json_buffer(cap, "cap.json", {});
  in = t.inputs(t.ops[0]);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_FALSE(t.tensors[in[0]].has_shape);
  EXPECT_TRUE(t.tensors[in[1]].has_shape);
  EXPECT_NE(warning_with(t, "1 tensor shapes dropped"), nullptr);
}

TEST(HostileLimits, TimesOutOfInt64Range) {
  // each value fits, but ts + dur does not
  std::string json = R"([{"ph":"X","cat":"cpu_op","name":"a","ts":9000000000000000,"dur":9000000000000000}])";
  InputError e = json_error(json);
  EXPECT_EQ(e.offset(), 1u);
  EXPECT_TRUE(contains(e.what(), "event #0: \"ts\" + \"dur\" is past the int64 nanosecond range")) << e.what();
  // two events, each fine, 9e18 ns apart in both directions: the span does not fit
  json = R"([{"ph":"X","cat":"cpu_op","name":"a","ts":-5000000000000000,"dur":1},)"
         "\n"
         R"({"ph":"X","cat":"cpu_op","name":"b","ts":5000000000000000,"dur":1}])";
  e = json_error(json);
  EXPECT_EQ(e.offset(), json.find("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\""));
  EXPECT_TRUE(contains(e.what(), "event #1: its time is so far from the other events'")) << e.what();
  // a span just inside the range reads, rebased on the earliest start
  json = R"([{"ph":"X","cat":"cpu_op","name":"a","ts":-4000000000000000,"dur":1},)"
         R"({"ph":"X","cat":"cpu_op","name":"b","ts":4000000000000000,"dur":1}])";
  Trace t = read_chrome_json_buffer(json, "ok.json", {});
  ASSERT_EQ(t.ops.size(), 2u);
  EXPECT_EQ(t.ops[1].start_ns, int64_t(8000000000000000000));
  // B/E pairs are covered by the same check
  json = R"([{"ph":"B","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":-5000000000000000},)"
         R"({"ph":"E","pid":1,"tid":1,"ts":5000000000000000}])";
  EXPECT_TRUE(contains(json_error(json).what(), "event #1: its time is so far"));
}

TEST(HostileLimits, CsvFieldAndRecordSizes) {
  // one unquoted field over the limit
  std::string text = "a,b\n1," + std::string(limits::kMaxCsvFieldBytes + 1, 'x') + "\n";
  CsvReader r(memory_byte_source(text, "big.csv"), "big.csv");
  std::vector<std::string> row;
  ASSERT_TRUE(r.next(row));
  try {
    r.next(row);
    FAIL() << "1 MiB field accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "big.csv");
    EXPECT_EQ(e.offset(), 6u);  // the field's start
    EXPECT_TRUE(contains(e.what(), "line 2: a field longer than 1 MiB")) << e.what();
  }
  // a quoted one (an unterminated quote in a large file ends here, not at the end of the input)
  text = "a,b\n1,\"" + std::string(limits::kMaxCsvFieldBytes + 10, 'x');
  CsvReader q(memory_byte_source(text, "q.csv"), "q.csv");
  ASSERT_TRUE(q.next(row));
  EXPECT_THROW(q.next(row), InputError);
  // too many fields in one record
  text = std::string(limits::kMaxCsvFields, ',') + "\n";
  CsvReader wide(memory_byte_source(text, "wide.csv"), "wide.csv");
  try {
    wide.next(row);
    FAIL() << "record with " << limits::kMaxCsvFields + 1 << " fields accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.offset(), 0u);
    EXPECT_TRUE(contains(e.what(), "line 1: more than 4096 fields in one record")) << e.what();
  }
  // exactly at both limits reads
  text = std::string(limits::kMaxCsvFields - 1, ',') + "\n" + std::string(limits::kMaxCsvFieldBytes, 'y') + "\n";
  CsvReader ok(memory_byte_source(text, "ok.csv"), "ok.csv");
  ASSERT_TRUE(ok.next(row));
  EXPECT_EQ(row.size(), limits::kMaxCsvFields);
  ASSERT_TRUE(ok.next(row));
  EXPECT_EQ(row[0].size(), limits::kMaxCsvFieldBytes);
}

TEST(HostileLimits, KernelDetailsTimesOutOfRange) {
  // start + duration past int64 ns
  std::string text = kCsvHeader + "k,9000000000000000,9000000000000000,AI_CORE\n";
  InputError e = csv_file_error(text);
  EXPECT_EQ(e.offset(), text.find("9000000000000000,AI_CORE"));
  EXPECT_TRUE(contains(e.what(), "line 2: Start Time(us) + Duration(us) is past the int64 nanosecond range"))
      << e.what();
  // rows too far apart to rebase on the earliest start
  text = kCsvHeader + "k,-5000000000000000,1,AI_CORE\nk,5000000000000000,1,AI_CORE\n";
  e = csv_file_error(text);
  EXPECT_EQ(e.offset(), text.find("5000000000000000,1,AI_CORE\n", text.find('\n', kCsvHeader.size())));
  EXPECT_TRUE(contains(e.what(), "line 3: Start Time(us) '5000000000000000' is so far from the other rows'"))
      << e.what();
  // stream and device ids that do not fit int32 are unknown (-1), not wrapped
  TempCsv ok(kCsvHeader.substr(0, kCsvHeader.size() - 1) + ",Stream ID,Device_id\nk,10,1,AI_CORE,4294967297,-3\n");
  Trace t = read_ascend(ok.path.string(), {});
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].stream, -1);
  EXPECT_EQ(t.kernels[0].device, -1);
}

TEST(HostileLimits, ProfilerTotalsOutOfRange) {
  fs::path dir = fs::temp_directory_path() / ("npud_limits_dir_" + std::to_string(::getpid()));
  fs::create_directories(dir / "ASCEND_PROFILER_OUTPUT");
  std::ofstream(dir / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv")
      << "OP Type,Core Type,Total Time(us)\nA,AI_CPU,9000000000000000\nB,AI_CPU,9000000000000000\n";
  try {
    read_ascend(dir.string(), {});
    ADD_FAILURE() << "overflowing total accepted";
  } catch (const InputError& e) {
    EXPECT_NE(e.file().find("op_statistic.csv"), std::string::npos);
    EXPECT_TRUE(contains(e.what(), "line 3: Total Time(us): the AI_CPU total is out of range")) << e.what();
  }
  fs::remove_all(dir);
}
