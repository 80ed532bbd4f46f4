// Inputs must be regular files: a FIFO used to block every reader forever (open() waits for a
// writer) and a link to /dev/zero grew until memory ran out. Each reader refuses them at
// once, naming the file and what it is.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "ingest/byte_source.hpp"
#include "util/input_error.hpp"
#include "numeric/dump.hpp"
#include "numeric/npy.hpp"
#include "source/scanner.hpp"
#include "util/regular_file.hpp"

namespace fs = std::filesystem;
using namespace npud;

namespace {

struct FifoDir {
  fs::path dir;
  FifoDir() {
    dir = fs::temp_directory_path() / ("npud_fifo_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  ~FifoDir() { fs::remove_all(dir); }
  std::string fifo(const std::string& name) {
    fs::path p = dir / name;
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0);
    return p.string();
  }
};

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(RegularInputs, TraceReaderRefusesAFifo) {
  FifoDir d;
  std::string p = d.fifo("trace.json");
  EXPECT_NE(error_of([&] { open_byte_source(p); }).find("it is a FIFO"), std::string::npos);
}

TEST(RegularInputs, NpyAndDumpIndexRefuseAFifo) {
  FifoDir d;
  std::string npy = d.fifo("x.npy");
  EXPECT_NE(error_of([&] { read_npy_header(npy); }).find("it is a FIFO"), std::string::npos);
  std::string index = d.fifo("index.jsonl");
  EXPECT_NE(error_of([&] { read_dump(index); }).find("FIFO"), std::string::npos);
}

TEST(RegularInputs, ScanReportsAFifoAsUnreadable) {
  FifoDir d;
  std::string py = d.fifo("train.py");
  ScanOptions opts;
  auto results = scan_files({py}, opts);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, FileStatus::ReadError);
  EXPECT_NE(results[0].note.find("it is a FIFO"), std::string::npos) << results[0].note;
}

TEST(RegularInputs, DevicesAndSizeLimitsAreRefused) {
  std::string out, error;
  EXPECT_FALSE(read_regular_file("/dev/zero", 1 << 20, out, error));
  EXPECT_NE(error.find("character device"), std::string::npos) << error;
  FifoDir d;
  fs::path small = d.dir / "small.txt";
  { FILE* f = std::fopen(small.c_str(), "w"); std::fputs("0123456789", f); std::fclose(f); }
  EXPECT_FALSE(read_regular_file(small.string(), 5, out, error));
  EXPECT_NE(error.find("too large"), std::string::npos) << error;
  ASSERT_TRUE(read_regular_file(small.string(), 10, out, error)) << error;
  EXPECT_EQ(out, "0123456789");
}
