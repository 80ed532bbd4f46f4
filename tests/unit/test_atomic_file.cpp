// Output files (every -o, scan --fix) go through AtomicFile: whatever happens before
// commit(), the file it replaces stays whole and no temporary file is left behind.
// tests/e2e/test_atomic_output.py kills real runs (analyze -o, scan --fix) at random moments.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "file_text.hpp"
#include "cli/output.hpp"
#include "util/atomic_file.hpp"

namespace fs = std::filesystem;
using namespace npud;

namespace {

// A fresh directory per test, so "nothing else is left" can be checked by listing it.
struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("npud_atomic_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

const std::string kOld = "{\"old\": \"a good report\"}\n";

}  // namespace

TEST(AtomicFile, ThrowMidwayKeepsTheOldFileAndLeavesNoTemp) {
  TempDir d;
  fs::path target = d.path / "report.json";
  write(target, kOld);
  try {
    AtomicFile f(target.string());
    f.stream() << "{\"new\": [";
    for (int i = 0; i < 100000; ++i) f.stream() << i << ",";  // well past any stream buffer
    f.stream().flush();
    // the half-written text exists only in memory until commit()
    EXPECT_EQ(test::file_text(target), kOld);
    EXPECT_EQ(d.entries(), std::vector<std::string>{"report.json"});
    throw std::runtime_error("renderer failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(test::file_text(target), kOld);
  EXPECT_EQ(d.entries(), std::vector<std::string>{"report.json"});
}

TEST(AtomicFile, CommitReplacesWholeAndLeavesNoTemp) {
  TempDir d;
  fs::path target = d.path / "report.json";
  write(target, kOld);
  {
    AtomicFile f(target.string());
    f.stream() << "{\"new\": true}\n";
    f.commit();
  }
  EXPECT_EQ(test::file_text(target), "{\"new\": true}\n");
  EXPECT_EQ(d.entries(), std::vector<std::string>{"report.json"});
  // a new file (nothing to replace) appears only at commit
  fs::path fresh = d.path / "fresh.txt";
  {
    AtomicFile f(fresh.string());
    f.stream() << "x";
    EXPECT_FALSE(fs::exists(fresh));
    f.commit();
  }
  EXPECT_EQ(test::file_text(fresh), "x");
}

TEST(AtomicFile, RefusesADirectoryAndLeavesNoTemp) {
  TempDir d;
  fs::path target = d.path / "out";
  fs::create_directories(target / "inside");
  EXPECT_THROW(AtomicFile f(target.string()), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(target / "inside"));
  EXPECT_EQ(d.entries(), std::vector<std::string>{"out"});
  // a directory that does not exist: the error comes at once, nothing is written
  EXPECT_THROW(AtomicFile((d.path / "no" / "such" / "dir" / "r.json").string()), std::runtime_error);
}

TEST(AtomicFile, KeepsThePermissionsOfTheFileItReplaces) {
  TempDir d;
  fs::path script = d.path / "train.py";
  write(script, "x = y.cuda()\n");
  ::chmod(script.c_str(), 0750);
  {
    AtomicFile f(script.string());
    f.stream() << "x = y.npu()\n";
    f.commit();
  }
  struct stat st {};
  ASSERT_EQ(::stat(script.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(test::file_text(script), "x = y.npu()\n");
}

// The CLI's -o path: a renderer that throws halfway leaves the old report and reports failure.
TEST(AtomicFile, EmitReportRendererFailure) {
  TempDir d;
  fs::path target = d.path / "report.json";
  write(target, kOld);
  bool ok = emit_report(target.string(), false, [](std::ostream& os, bool) {
    os << "{\"findings\": [" << std::string(1 << 20, ' ');
    throw std::runtime_error("out of memory while rendering");
  });
  EXPECT_FALSE(ok);
  EXPECT_EQ(test::file_text(target), kOld);
  EXPECT_EQ(d.entries(), std::vector<std::string>{"report.json"});
  ok = emit_report(target.string(), false, [](std::ostream& os, bool) { os << "{\"findings\": []}\n"; });
  EXPECT_TRUE(ok);
  EXPECT_EQ(test::file_text(target), "{\"findings\": []}\n");
  EXPECT_EQ(d.entries(), std::vector<std::string>{"report.json"});
}

// Issue: `-o /dev/null` used to replace the machine's /dev/null with a regular file.
TEST(AtomicFile, WritesACharacterDeviceInPlace) {
  struct stat before {}, after {};
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  {
    AtomicFile f("/dev/null");
    f.stream() << "report";
    f.commit();
  }
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(before.st_rdev, after.st_rdev);
  EXPECT_EQ(before.st_ino, after.st_ino);
}

TEST(AtomicFile, WritesAFifoInPlace) {
  TempDir d;
  fs::path fifo = d.path / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = test::file_text(fifo); });
  {
    AtomicFile f(fifo.string());
    f.stream() << "through the pipe";
    f.commit();
  }
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(d.entries(), std::vector<std::string>{"pipe"});
}

TEST(AtomicFile, FollowsASymlinkAndKeepsIt) {
  TempDir d;
  fs::create_directories(d.path / "real");
  fs::path real = d.path / "real" / "report.json";
  write(real, kOld);
  fs::path link = d.path / "latest.json";
  fs::create_symlink(fs::path("real") / "report.json", link);
  {
    AtomicFile f(link.string());
    f.stream() << "new";
    f.commit();
  }
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(test::file_text(real), "new");
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"latest.json", "real"}));
  // a link that leads nowhere is refused, and stays as it was
  fs::path dangling = d.path / "dangling.json";
  fs::create_symlink(d.path / "missing" / "x.json", dangling);
  EXPECT_THROW(AtomicFile f(dangling.string()), std::runtime_error);
  EXPECT_TRUE(fs::is_symlink(dangling));
}

// Issue: the temporary name was `<target>.tmp.<pid>`, opened with truncate and no O_EXCL: a
// link planted there had its target overwritten.
TEST(AtomicFile, APlantedLinkUnderTheOldTemporaryNameIsNotFollowed) {
  TempDir d;
  fs::path victim = d.path / "victim";
  write(victim, "precious");
  fs::path target = d.path / "report.json";
  fs::create_symlink(victim, d.path / ("report.json.tmp." + std::to_string(::getpid())));
  {
    AtomicFile f(target.string());
    f.stream() << "report";
    f.commit();
  }
  EXPECT_EQ(test::file_text(victim), "precious");
  EXPECT_EQ(test::file_text(target), "report");
}

// issue 31 F-26: run/amp-check probe the report's directory before the program starts; the
// probe leaves nothing behind. (An unwritable directory needs a non-root user: root writes any.)
TEST(AtomicFile, CheckWritableLeavesNothingAndRefusesAnUnwritableDirectory) {
  TempDir d;
  AtomicFile(( d.path / "report.txt").string()).check_writable();
  EXPECT_TRUE(d.entries().empty());
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into any directory";
  fs::create_directories(d.path / "ro");
  fs::permissions(d.path / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  try {
    AtomicFile((d.path / "ro" / "report.txt").string()).check_writable();
    ADD_FAILURE() << "an unwritable directory passed the probe";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((d.path / "ro").string()), std::string::npos) << e.what();
  }
  fs::permissions(d.path / "ro", fs::perms::owner_all);
}

// /dev/stdout leads to /proc/self/fd/1, which names a pipe "pipe:[N]": no path to follow, but
// the kernel opens it through the link, so the report goes into the pipe (issue 31, minor).
TEST(AtomicFile, WritesAPipeThroughProcSelfFd) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::string path = "/proc/self/fd/" + std::to_string(fds[1]);
  {
    AtomicFile out(path);
    out.check_writable();
    out.stream() << "through the pipe\n";
    out.commit();
  }
  ::close(fds[1]);
  char buf[64] = {};
  ssize_t n = ::read(fds[0], buf, sizeof buf - 1);
  ::close(fds[0]);
  EXPECT_EQ(std::string(buf, n > 0 ? size_t(n) : 0), "through the pipe\n");
}
