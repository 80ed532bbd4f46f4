// Bad input must end in an InputError naming the file and a byte offset, never a crash.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "file_text.hpp"
#include "ingest/chrome_json.hpp"
#include "util/input_error.hpp"
#include "ingest/byte_source.hpp"
#include "ingest/prefetch_source.hpp"
#include "ingest/limits.hpp"
#include "ingest/reader.hpp"
#include "scratch_path.hpp"

namespace fs = std::filesystem;
using namespace npud;

namespace {

// Reads json from memory and returns the error (fails the test when none is thrown).
InputError error_of(const std::string& json, const ReadOptions& opts = {}) {
  try {
    read_chrome_json_buffer(json, "bad.json", opts);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError for: " << json.substr(0, 200);
  return InputError("", 0, "");
}

std::string gzip_bytes(const std::string& raw) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, raw.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = uInt(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& content, const std::string& suffix = ".json") {
    path = (fs::temp_directory_path() / ("npud_hostile_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(counter()++) + suffix)).string();
    std::ofstream(path, std::ios::binary) << content;
  }
  ~TempFile() { fs::remove(path); }
  static int& counter() {
    static int c = 0;
    return c;
  }
};

const std::string kSmallValid = R"({"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"]}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 12.5, "dur": 1, "args": {"correlation": 3, "device": 0}}
], "displayTimeUnit": "ms"})";

}  // namespace

TEST(HostileInput, EmptyFile) {
  TempFile f("");
  try {
    read_trace(f.path);
    FAIL() << "empty file accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), f.path);
    EXPECT_EQ(e.offset(), 0u);
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos);
    EXPECT_NE(e.describe().find(f.path), std::string::npos);
  }
  auto e = error_of("  \n\t ");
  EXPECT_EQ(e.offset(), 5u);
  EXPECT_NE(std::string(e.what()).find("only whitespace"), std::string::npos);
}

TEST(HostileInput, NotJson) {
  auto e = error_of("hello world");
  EXPECT_EQ(e.file(), "bad.json");
  EXPECT_EQ(e.offset(), 0u);
  EXPECT_NE(std::string(e.what()).find("not JSON"), std::string::npos);
  e = error_of("  <html>");
  EXPECT_EQ(e.offset(), 2u);
}

TEST(HostileInput, WrongTopLevel) {
  auto e = error_of("42");
  EXPECT_EQ(e.offset(), 0u);
  EXPECT_NE(std::string(e.what()).find("top level is a number"), std::string::npos);
  e = error_of(" \"text\"");
  EXPECT_EQ(e.offset(), 1u);
  EXPECT_NE(std::string(e.what()).find("top level is a string"), std::string::npos);
  e = error_of("{\"traceEvents\": 5}");
  EXPECT_EQ(e.offset(), 16u);
  EXPECT_NE(std::string(e.what()).find("\"traceEvents\" is not an array"), std::string::npos);
  e = error_of("{\"other\": [1, 2]}");
  EXPECT_EQ(e.offset(), 16u);
  EXPECT_NE(std::string(e.what()).find("no \"traceEvents\""), std::string::npos);
  e = error_of("{}");
  EXPECT_EQ(e.offset(), 1u);
}

TEST(HostileInput, EventNotAnObject) {
  auto e = error_of("[1]");
  EXPECT_EQ(e.offset(), 1u);
  EXPECT_NE(std::string(e.what()).find("event #0 is not an object (found a number)"), std::string::npos);
  std::string json = R"({"traceEvents": [{"ph": "i", "ts": 1}, "x"]})";
  e = error_of(json);
  EXPECT_EQ(e.offset(), json.find("\"x\""));
  EXPECT_NE(std::string(e.what()).find("event #1 is not an object (found a string)"), std::string::npos);
}

TEST(HostileInput, TsNotANumber) {
  std::string json = R"([{"ph": "X", "name": "a", "ts": true, "dur": 1}])";
  auto e = error_of(json);
  EXPECT_EQ(e.offset(), json.find("true"));
  EXPECT_NE(std::string(e.what()).find("\"ts\" is not a number"), std::string::npos);
  json = R"([{"ph": "X", "name": "a", "ts": "soon", "dur": 1}])";
  e = error_of(json);
  EXPECT_EQ(e.offset(), json.find("\"soon\""));
  json = R"([{"ph": "X", "name": "a", "ts": 1, "dur": [1]}])";
  e = error_of(json);
  EXPECT_EQ(e.offset(), json.find("[1]"));
  EXPECT_NE(std::string(e.what()).find("\"dur\" is not a number (found an array)"), std::string::npos);
}

TEST(HostileInput, HugeNumbers) {
  for (std::string num : {"1e400", "99999999999999999999999", "-1e30", "9223372036854775.808"}) {
    std::string json = R"([{"ph": "X", "name": "a", "ts": )" + num + R"(, "dur": 1}])";
    auto e = error_of(json);
    EXPECT_EQ(e.offset(), json.find(num)) << num;
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
  std::string json = R"([{"ph": "X", "name": "a", "ts": 1, "pid": 99999999999999999999999}])";
  auto e = error_of(json);
  EXPECT_EQ(e.offset(), json.find("9999"));
  EXPECT_NE(std::string(e.what()).find("\"pid\""), std::string::npos);
  // a huge number in an arg npu-doctor does not need is harmless
  EXPECT_NO_THROW(read_chrome_json_buffer(R"([{"ph":"X","cat":"cpu_op","name":"a","ts":1,"args":{"x":1e999}}])",
                                          "ok.json", {}));
}

TEST(HostileInput, TruncatedObjectForm) {
  // cut inside the second event
  std::string json = kSmallValid.substr(0, kSmallValid.find("{\"ph\": \"X\", \"cat\": \"kernel\"") + 20);
  auto e = error_of(json);
  EXPECT_EQ(e.offset(), json.size());
  EXPECT_NE(std::string(e.what()).find("input ends inside traceEvents at byte " + std::to_string(json.size()) +
                                       " (in event #1"),
            std::string::npos)
      << e.what();
  // cut between events
  json = kSmallValid.substr(0, kSmallValid.find("{\"ph\": \"X\", \"cat\": \"kernel\""));
  e = error_of(json);
  EXPECT_EQ(e.offset(), json.size());
  EXPECT_EQ(std::string(e.what()), "input ends inside traceEvents at byte " + std::to_string(json.size()) +
                                       ": file truncated?");
  // cut after the event list
  json = kSmallValid.substr(0, kSmallValid.find("\"displayTimeUnit\""));
  e = error_of(json);
  EXPECT_EQ(e.offset(), json.size());
  EXPECT_NE(std::string(e.what()).find("input ends inside the top-level object"), std::string::npos);
  // allow_truncated keeps what is complete
  ReadOptions opts;
  opts.allow_truncated = true;
  json = kSmallValid.substr(0, kSmallValid.find("{\"ph\": \"X\", \"cat\": \"kernel\"") + 20);
  Trace t = read_chrome_json_buffer(json, "cut.json", opts);
  EXPECT_EQ(t.ops.size(), 1u);
  EXPECT_EQ(t.kernels.size(), 0u);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_EQ(t.warnings[0].offset, kSmallValid.find("{\"ph\": \"X\", \"cat\": \"kernel\""));
}

TEST(HostileInput, TruncatedArrayForm) {
  std::string json = "[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": 1, \"dur\": 2},\n{\"ph\": \"X\", \"na";
  auto e = error_of(json);
  EXPECT_EQ(e.offset(), json.size());
  const size_t second = json.find("{\"ph\": \"X\", \"na");
  EXPECT_NE(std::string(e.what()).find("input ends inside event #1 (which starts at byte " + std::to_string(second) + ")"),
            std::string::npos)
      << e.what();
  ReadOptions opts;
  opts.allow_truncated = true;
  Trace t = read_chrome_json_buffer(json, "cut.json", opts);
  EXPECT_EQ(t.ops.size(), 1u);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_EQ(t.warnings[0].offset, second);
  // missing ']' after complete events, with or without a trailing comma, is fine
  const size_t first_end = json.find('}') + 1;
  EXPECT_EQ(read_chrome_json_buffer(json.substr(0, first_end), "a.json", {}).ops.size(), 1u);
  EXPECT_EQ(read_chrome_json_buffer(json.substr(0, first_end + 1), "a.json", {}).ops.size(), 1u);
  EXPECT_EQ(read_chrome_json_buffer("[", "a.json", {}).ops.size(), 0u);
}

TEST(HostileInput, DeepNesting) {
  std::string json = "[{\"a\":" + std::string(100, '[');
  auto e = error_of(json);
  EXPECT_EQ(e.offset(), 68u);  // the bracket that would open level 65
  EXPECT_NE(std::string(e.what()).find("nested deeper than 64"), std::string::npos);
  // the same in a skipped top-level value
  json = "{\"junk\":" + std::string(100, '{');
  e = error_of(json);
  EXPECT_NE(std::string(e.what()).find("nested deeper than 64"), std::string::npos);
  // 63 levels inside an event are fine
  std::string ok = "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":1,\"args\":{\"x\":" + std::string(61, '[') +
                   std::string(61, ']') + "}}]";
  EXPECT_NO_THROW(read_chrome_json_buffer(ok, "ok.json", {}));
}

TEST(HostileInput, MismatchedBracketsAndBadEventJson) {
  std::string json = R"([{"a": [1, 2}])";
  auto e = error_of(json);
  EXPECT_EQ(e.offset(), json.find('}'));
  EXPECT_NE(std::string(e.what()).find("brackets do not match"), std::string::npos);
  json = R"([{"ph": "X", "name": "a",, "ts": 1}])";
  e = error_of(json);
  EXPECT_GE(e.offset(), 1u);
  EXPECT_LE(e.offset(), json.find(",,") + 2);
  EXPECT_NE(std::string(e.what()).find("event #0"), std::string::npos);
  json = R"([{"ph": "X"} {"ph": "X"}])";
  e = error_of(json);
  EXPECT_EQ(e.offset(), 13u);
  EXPECT_NE(std::string(e.what()).find("expected ',' or ']' after event #0"), std::string::npos);
  e = error_of("[]x");
  EXPECT_EQ(e.offset(), 2u);
}

TEST(HostileInput, HugeSingleEvent) {
  std::string json = "[{\"ph\":\"X\",\"name\":\"" + std::string(65u << 20, 'a') + "\"}]";
  auto e = error_of(json);
  EXPECT_EQ(e.offset(), 1u);
  EXPECT_NE(std::string(e.what()).find("larger than 64 MiB"), std::string::npos);
}

TEST(HostileInput, BigUnknownTopLevelValueIsSkipped) {
  // 3 MB of an unknown key before traceEvents: skipped without being kept
  std::string json = "{\"junk\": [" ;
  for (int i = 0; i < 300000; ++i) json += "\"abcdefgh\",";
  json += "0], " + kSmallValid.substr(1);
  Trace t = read_chrome_json_buffer(json, "big.json", {});
  EXPECT_EQ(t.ops.size(), 1u);
  EXPECT_EQ(t.kernels.size(), 1u);
}

TEST(HostileInput, CorruptGzip) {
  std::string gz = gzip_bytes(kSmallValid);
  ASSERT_GT(gz.size(), 40u);
  // flip bytes in the compressed body
  std::string bad = gz;
  for (size_t i = 12; i < 30; ++i) bad[i] = char(bad[i] ^ 0x5a);
  TempFile f(bad, ".json.gz");
  try {
    read_trace(f.path);
    FAIL() << "corrupt gzip accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), f.path);
    EXPECT_LE(e.offset(), kSmallValid.size());
  }
  // cut-off gzip
  TempFile cut(gz.substr(0, gz.size() / 2), ".json.gz");
  try {
    read_trace(cut.path);
    FAIL() << "truncated gzip accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), cut.path);
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  // gzip magic and nothing else
  TempFile magic(std::string("\x1f\x8b", 2), ".gz");
  EXPECT_THROW(read_trace(magic.path), InputError);
  // intact gzip reads
  TempFile good(gz, ".json.gz");
  EXPECT_EQ(read_trace(good.path).ops.size(), 1u);
}

TEST(HostileInput, BinaryGarbage) {
  std::mt19937 rng(12345);
  std::string junk(4096, '\0');
  for (char& c : junk) c = char(rng());
  junk[0] = '\x01';
  auto e = error_of(junk);
  EXPECT_EQ(e.offset(), 0u);
  EXPECT_NE(std::string(e.what()).find("not JSON"), std::string::npos);
  // garbage after a valid start
  junk[0] = '[';
  junk[1] = '\x02';
  e = error_of(junk);
  EXPECT_EQ(e.offset(), 1u);
}

TEST(HostileInput, MissingFileAndDirectory) {
  try {
    read_trace("/nonexistent/npud/trace.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "/nonexistent/npud/trace.json");
    EXPECT_FALSE(e.has_offset());
  }
  EXPECT_THROW(read_trace(fs::temp_directory_path().string()), InputError);
}

// Every prefix and many random corruptions of a valid file: a Trace or an InputError, nothing else.
TEST(HostileInput, PrefixesAndMutationsNeverCrash) {
  std::string base = test::file_text(std::string(NPUD_TEST_DATA) + "/chrome/small_object.json");
  ASSERT_FALSE(base.empty());
  size_t errors = 0;
  for (size_t n = 0; n < base.size(); ++n) {
    try {
      read_chrome_json_buffer(base.substr(0, n), "prefix.json", {});
    } catch (const InputError& e) {
      ++errors;
      EXPECT_LE(e.offset(), n);
    }
  }
  EXPECT_GT(errors, base.size() / 2);
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    std::string m = base;
    int edits = 1 + int(rng() % 4);
    for (int k = 0; k < edits; ++k) m[rng() % m.size()] = char(rng() % 256);
    try {
      read_chrome_json_buffer(m, "mutated.json", {});
    } catch (const InputError& e) {
      EXPECT_LE(e.offset(), m.size());
    }
  }
}

// The CLI turns an InputError into exit code 2 and names the file and the byte offset.
TEST(HostileInput, CliExitsWithTwo) {
  std::string bin = NPUD_BINARY;
  if (!fs::exists(bin)) GTEST_SKIP() << "no binary at " << bin;
  std::string help;
  {
    FILE* p = popen((bin + " --help 2>&1").c_str(), "r");
    ASSERT_NE(p, nullptr);
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, p)) > 0) help.append(buf, k);
    pclose(p);
  }
  // a CLI without `analyze` is a broken build, not a reason to skip
  ASSERT_NE(help.find("analyze"), std::string::npos) << "`npu-doctor --help` lists no analyze command:\n" << help;
  std::string json = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1}, {\"ph\": \"X\", \"ts\": 1e400}]}";
  TempFile f(json);
  std::string out;
  FILE* p = popen((bin + " analyze " + f.path + " 2>&1 >/dev/null").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, k);
  int status = pclose(p);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(out.find(f.path), std::string::npos) << out;
  EXPECT_NE(out.find("byte " + std::to_string(json.find("1e400"))), std::string::npos) << out;
}

// Round two (issue: hardening). A UTF-8 byte order mark was rejected although format detection
// skipped it: the first read holds only the 2 bytes the gzip sniffing peeked.
TEST(HostileInput, ByteOrderMarkIsSkipped) {
  const std::string bom = "\xEF\xBB\xBF";
  for (const std::string& body : {bom + kSmallValid, bom + "\n[" +
                                     R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 2}])"}) {
    TempFile plain(body), packed(gzip_bytes(body), ".json.gz");
    EXPECT_EQ(read_trace(plain.path).ops.size(), 1u);
    EXPECT_EQ(read_trace(packed.path).ops.size(), 1u);
  }
}

// #18.11: a small .gz of repeated events inflates to billions of them; the event model grew
// until bad_alloc. More events than ReadOptions::max_events is an error at the offset of the
// event that passes it.
TEST(HostileInput, RepeatedEventsBombStopsAtTheEventLimit) {
  std::string body = "{\"traceEvents\":[\n";
  for (int i = 0; i < 5000; ++i)
    body += R"({"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":)" + std::to_string(i * 10) +
            R"(,"dur":5},)" "\n";
  body += R"({"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":1,"dur":1}]})";
  TempFile packed(gzip_bytes(body), ".json.gz");
  ReadOptions opts;
  EXPECT_EQ(opts.max_events, limits::kMaxEvents);
  EXPECT_EQ(read_trace(packed.path, opts).ops.size(), 5001u);
  opts.max_events = 1000;
  try {
    read_trace(packed.path, opts);
    ADD_FAILURE() << "read more than max_events";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 1000 events"), std::string::npos) << e.what();
    size_t at = 0;  // the 1001st event's line
    for (int line = 0; line < 1001; ++line) at = body.find('\n', at) + 1;
    EXPECT_EQ(e.offset(), at);
  }
}

// Inflating runs a few chunks ahead on a second thread (ingest/prefetch_source.hpp): the bytes,
// their order and a corrupt member's error offset are those of the plain reader.
std::string read_all(ByteSource& src) {
  std::string out, buf(1 << 16, '\0');
  for (size_t k; (k = src.read(buf.data(), buf.size())) > 0;) out.append(buf.data(), k);
  return out;
}

TEST(HostileInput, PrefetchedGzipReadsTheSameBytesAndFailsAtTheSameOffset) {
  std::string body;
  for (int64_t i = 0; body.size() < (size_t(20) << 20); ++i) body += "line " + std::to_string(i * 7919) + "\n";
  std::string gz = gzip_bytes(body);
  TempFile good(gz, ".gz");
  auto src = prefetched(open_byte_source(good.path));
  EXPECT_TRUE(read_all(*src) == body);
  EXPECT_EQ(src->consumed(), gz.size());
  std::string bad = gz;
  for (size_t i = bad.size() / 2; i < bad.size() / 2 + 64; ++i) bad[i] = char(bad[i] ^ 0x5a);
  TempFile broken(bad, ".gz");
  auto offset_of = [&](std::unique_ptr<ByteSource> s) -> uint64_t {
    try {
      read_all(*s);
    } catch (const InputError& e) {
      return e.offset();
    }
    ADD_FAILURE() << "corrupt gzip read without an error";
    return 0;
  };
  EXPECT_EQ(offset_of(prefetched(open_byte_source(broken.path))), offset_of(open_byte_source(broken.path)));
  auto early = prefetched(open_byte_source(good.path));   // dropped after one read: no hang
  char first[16];
  EXPECT_EQ(early->read(first, sizeof first), sizeof first);
}

TEST(HostileInput, NewerCaptureVersionIsRefusedWithItsOffset) {
  std::string head = "[\n";
  std::string capture = head + R"({"ph":"M","pid":1,"tid":0,"name":"npu_doctor","args":{"format":"npu-doctor-capture","version":99}})" "\n]\n";
  InputError e = error_of(capture);
  EXPECT_NE(std::string(e.what()).find("capture format version 99 is newer"), std::string::npos) << e.what();
  EXPECT_EQ(e.offset(), head.size());
}

TEST(HostileInput, EmptyOrDanglingProfilerOutputIsAnError) {
  fs::path root = test::scratch_path("npud_ascend");
  fs::create_directories(root / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT");
  try {
    read_trace((root / "rank0_ascend_pt").string());
    ADD_FAILURE() << "an empty ASCEND_PROFILER_OUTPUT read as a trace";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("empty torch_npu profiler output"), std::string::npos) << e.what();
  }
  fs::create_symlink(root / "gone.csv", root / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv");
  try {
    read_trace((root / "rank0_ascend_pt").string());
    ADD_FAILURE() << "a dangling kernel_details.csv read as no kernels";
  } catch (const InputError& e) {
    EXPECT_NE(e.file().find("kernel_details.csv"), std::string::npos) << e.file();
  }
  fs::remove_all(root);
}

// #18: only a capture's last line may be cut off (a killed run). A line cut in the middle,
// with the rest of the capture after it, used to swallow everything after it silently.
TEST(HostileInput, CaptureCutInTheMiddleIsAnErrorNotATruncation) {
  std::string header =
      "[\n{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"npu_doctor\",\"args\":{\"format\":\"npu-doctor-capture\","
      "\"version\":1,\"torch\":\"2.1.0\",\"python\":\"3.11\",\"device\":\"cpu\"}}\n";
  std::string op = ",{\"ph\":\"X\",\"cat\":\"aten\",\"name\":\"aten::add.Tensor\",\"pid\":1,\"tid\":1,\"ts\":1.0,\"dur\":1.0}\n";
  std::string cut = ",{\"ph\":\"X\",\"cat\":\"aten\",\"name\":\"aten::mu";
  // Cut last line: read, with a warning.
  Trace t = read_chrome_json_buffer(header + op + op + cut, "c.npud.json", {});
  EXPECT_EQ(t.ops.size(), 2u);
  ASSERT_EQ(t.warnings.size(), 1u);
  // The same cut with more lines after it: an error at the end of the damaged line.
  std::string text = header + op + cut + "\n" + op + op;
  InputError e = error_of(text);
  EXPECT_EQ(e.offset(), text.find(cut) + cut.size());
  EXPECT_NE(std::string(e.what()).find("more lines follow"), std::string::npos) << e.what();
}

// Where the build has isa-l, .gz inflates with it (NPUD_GZIP=zlib selects zlib): both read the
// same bytes from every shape of gzip file and refuse the same broken ones.
TEST(HostileInput, GzipInflatersAgree) {
  std::string body;
  for (int64_t i = 0; body.size() < (size_t(3) << 20); ++i) body += "{\"ph\":\"X\",\"ts\":" + std::to_string(i * 7919) + "},\n";
  std::string one = gzip_bytes(body);
  std::string two = gzip_bytes(body.substr(0, 1000)) + std::string(7, '\0') + gzip_bytes(body.substr(1000));
  std::string flipped = one;
  for (size_t i = flipped.size() / 2; i < flipped.size() / 2 + 64; ++i) flipped[i] = char(flipped[i] ^ 0x5a);
  std::string bad_crc = one, bad_size = one;
  bad_crc[bad_crc.size() - 6] = char(bad_crc[bad_crc.size() - 6] ^ 1);
  bad_size.back() = char(bad_size.back() ^ 1);   // the trailer's length (ISIZE)
  std::string reserved = one;
  reserved[3] = char(reserved[3] | 0x60);   // reserved header flag bits (isa-l alone would read on)
  struct Outcome {
    std::string bytes, error;
  };
  auto read_with = [&](const char* inflater, const std::string& file) {
    ::setenv("NPUD_GZIP", inflater, 1);
    TempFile f(file, ".gz");
    Outcome o;
    try {
      o.bytes = read_all(*open_byte_source(f.path));
    } catch (const InputError& e) {
      o.error = e.what();
      EXPECT_LE(e.offset(), body.size());
    }
    ::unsetenv("NPUD_GZIP");
    return o;
  };
  for (const std::string* file : {&one, &two}) {
    Outcome z = read_with("zlib", *file), fast = read_with("", *file);
    EXPECT_EQ(z.error, "");
    EXPECT_EQ(fast.error, "");
    EXPECT_TRUE(z.bytes == body);
    EXPECT_TRUE(fast.bytes == body);
  }
  for (const std::string& file :
       {flipped, bad_crc, bad_size, reserved, one.substr(0, one.size() / 2), one + "junk"}) {
    Outcome z = read_with("zlib", file), fast = read_with("", file);
    EXPECT_NE(z.error, "");
    EXPECT_NE(fast.error, "");
    // the same kind of error (corrupt / truncated / trailing data), whichever inflater
    for (const char* kind : {"corrupt gzip data", "truncated", "after the end of the gzip stream"})
      EXPECT_EQ(z.error.find(kind) == std::string::npos, fast.error.find(kind) == std::string::npos)
          << kind << ": " << z.error << " | " << fast.error;
  }
}

// A negative "dur" (a round-3 minor: accepted silently, computing 0) is read as 0 with one
// warning counting them and naming the first event and its offset.
TEST(HostileInput, NegativeDurationsAreClampedWithAWarningNamingTheEvent) {
  const std::string json = R"({"traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "conv_fwd", "pid": 0, "tid": 3, "ts": 100, "dur": 12, "args": {"device": 0}},
 {"ph": "X", "cat": "kernel", "name": "softmax_bwd", "pid": 0, "tid": 3, "ts": 150, "dur": -45.5, "args": {"device": 0}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 90, "dur": -2}
]})";
  Trace t = read_chrome_json_buffer(json, "neg.json", {});
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.kernels[1].dur_ns, 0);
  ASSERT_EQ(t.ops.size(), 1u);
  EXPECT_EQ(t.ops[0].dur_ns, 0);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].message.find("2 events with a negative duration"), std::string::npos) << t.warnings[0].message;
  EXPECT_NE(t.warnings[0].message.find("event #1 name \"softmax_bwd\" \"dur\" -45.5 us"), std::string::npos)
      << t.warnings[0].message;
  EXPECT_EQ(t.warnings[0].offset, json.find("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"softmax_bwd\""));
}
