// The HTML report's source snippets: only Python files under the allowed folders, never
// /proc, /sys or /dev (also through a symlink), read with bounds; a refusal says why.
// Variants of the round-3 repros html_snippet_leak.npud.json and html_snippet_bigfile.sh.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "analysis/trace_index.hpp"
#include "report/html_report.hpp"
#include "source/source_snippet.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;

class SourceSnippet : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("npud_test_snippet_" + std::to_string(::getpid()));
    project_ = base_ / "project";
    elsewhere_ = base_ / "elsewhere";
    fs::remove_all(base_);
    fs::create_directories(project_ / "pkg");
    fs::create_directories(elsewhere_);
    policy_.roots = {fs::canonical(project_)};
  }
  void TearDown() override { fs::remove_all(base_); }

  static void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
  static Location at(const fs::path& file, int line) {
    Location l;
    l.file = file.string();
    l.line = line;
    return l;
  }

  fs::path base_;
  fs::path project_, elsewhere_;
  SnippetPolicy policy_;
};

TEST_F(SourceSnippet, APythonFileUnderAnAllowedFolderIsShown) {
  write(project_ / "pkg" / "loop.py", "a = 1\nb = 2\nloss.item()\nc = 3\nd = 4\ne = 5\n");
  Snippet s = read_snippet(at(project_ / "pkg" / "loop.py", 3), 1, policy_);
  EXPECT_EQ(s.withheld, "");
  EXPECT_EQ(s.first_line, 2);
  EXPECT_EQ(s.lines, (std::vector<std::string>{"b = 2", "loss.item()", "c = 3"}));
}

TEST_F(SourceSnippet, FilesTheReportIsNotAboutAreWithheldWithTheReason) {
  write(elsewhere_ / "settings.py", "SECRET_KEY = 'k3y'\n");
  Snippet outside = read_snippet(at(elsewhere_ / "settings.py", 1), 3, policy_);
  EXPECT_TRUE(outside.lines.empty());
  EXPECT_NE(outside.withheld.find("outside the folders"), std::string::npos) << outside.withheld;

  write(project_ / ".netrc", "machine example.org password hunter2\n");
  Snippet not_source = read_snippet(at(project_ / ".netrc", 1), 3, policy_);
  EXPECT_TRUE(not_source.lines.empty());
  EXPECT_NE(not_source.withheld.find("Python source"), std::string::npos);

  for (const char* system : {"/proc/self/environ", "/proc/self/cmdline", "/dev/zero", "/sys/kernel/hostname"}) {
    Snippet s = read_snippet(at(system, 1), 3, policy_);
    EXPECT_TRUE(s.lines.empty()) << system;
    EXPECT_NE(s.withheld.find("system file"), std::string::npos) << system;
  }
  // Through a link inside the project, named like source.
  fs::create_symlink("/proc/self/environ", project_ / "env.py");
  Snippet linked = read_snippet(at(project_ / "env.py", 1), 3, policy_);
  EXPECT_TRUE(linked.lines.empty());
  EXPECT_NE(linked.withheld.find("system file"), std::string::npos);
  fs::create_symlink(elsewhere_ / "settings.py", project_ / "settings.py");
  Snippet via_link = read_snippet(at(project_ / "settings.py", 1), 3, policy_);
  EXPECT_NE(via_link.withheld.find("outside"), std::string::npos) << via_link.withheld << via_link.lines.size();
  // Nothing allowed at all: withheld too.
  EXPECT_NE(read_snippet(at(project_ / "env.py", 1), 3, SnippetPolicy{}).withheld, "");
}

TEST_F(SourceSnippet, AFileNotOnThisMachineGivesNothing) {
  Snippet s = read_snippet(at(project_ / "gone.py", 4), 3, policy_);
  EXPECT_TRUE(s.lines.empty());
  EXPECT_EQ(s.withheld, "");
}

TEST_F(SourceSnippet, ReadsAreBounded) {
  // Line 2 after 3 MB without a newline: not reached within the 1 MiB read.
  write(project_ / "big.py", std::string(3'000'000, '#') + "\nx = 1\n");
  Snippet far = read_snippet(at(project_ / "big.py", 2), 1, policy_);
  EXPECT_TRUE(far.lines.empty());
  EXPECT_NE(far.withheld.find("past the first 1 MiB"), std::string::npos) << far.withheld;
  // The long line itself: shown cut.
  Snippet cut = read_snippet(at(project_ / "big.py", 1), 0, policy_);
  ASSERT_EQ(cut.lines.size(), 1u);
  EXPECT_LE(cut.lines[0].size(), kMaxSnippetLineChars + 4);
}

TEST_F(SourceSnippet, PolicyTrustsRecordedFoldersOnlyForAProgramRunHere) {
  Trace t;
  t.set_env("cwd", elsewhere_.string());
  t.set_env("argv", "scripts/train.py --lr 3");
  fs::create_directories(elsewhere_ / "scripts");
  auto has = [](const SnippetPolicy& p, const fs::path& dir) {
    return std::find(p.roots.begin(), p.roots.end(), fs::canonical(dir)) != p.roots.end();
  };
  SnippetPolicy later = snippet_policy(&t, false);
  EXPECT_FALSE(has(later, elsewhere_));
  EXPECT_TRUE(has(later, fs::current_path()));
  SnippetPolicy ran = snippet_policy(&t, true);
  EXPECT_TRUE(has(ran, elsewhere_));
  EXPECT_TRUE(has(ran, elsewhere_ / "scripts"));
  t.set_env("cwd", "/");  // never a root that holds everything
  for (const fs::path& r : snippet_policy(&t, true).roots) EXPECT_NE(r, fs::path("/"));
}

TEST_F(SourceSnippet, TheHtmlReportSaysWhyASnippetIsMissing) {
  Trace t;
  t.finalize();
  Report r;
  r.command = "analyze";
  r.summary = summarize(TraceIndex(t));
  Finding f;
  f.rule = "SYNC001";
  f.message = "item";
  f.location.file = "/proc/self/environ";
  f.location.line = 1;
  r.findings.push_back(f);
  std::ostringstream os;
  render_html(os, r, TraceIndex(t));
  const std::string html = os.str();
  EXPECT_EQ(html.find("class=\"snippet\""), std::string::npos);
  EXPECT_NE(html.find("source of /proc/self/environ not shown: a system file"), std::string::npos);
}

}  // namespace
}  // namespace npud
