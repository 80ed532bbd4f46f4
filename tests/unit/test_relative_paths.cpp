// run/amp-check text reports name files under the working directory relative to it (issue 30).
#include <gtest/gtest.h>

#include "report/relative_paths.hpp"

namespace npud {
namespace {

TEST(RelativePaths, WholePathsUnderTheDirectoryLoseIt) {
  EXPECT_EQ(without_dir_prefix("/home/u/proj/train.py", "/home/u/proj"), "train.py");
  EXPECT_EQ(without_dir_prefix("Tensor.item at /home/u/proj/m/a.py:12 (called from /home/u/proj/b.py:3)",
                               "/home/u/proj/"),
            "Tensor.item at m/a.py:12 (called from b.py:3)");
}

TEST(RelativePaths, OtherPathsStayAsTheyAre) {
  EXPECT_EQ(without_dir_prefix("/home/u/projx/a.py", "/home/u/proj"), "/home/u/projx/a.py");
  EXPECT_EQ(without_dir_prefix("/x/home/u/proj/a.py", "/home/u/proj"), "/x/home/u/proj/a.py");
  EXPECT_EQ(without_dir_prefix("/usr/lib/python3/torch/nn.py", "/"), "/usr/lib/python3/torch/nn.py");
  EXPECT_EQ(without_dir_prefix("/a/b.py", ""), "/a/b.py");
}

TEST(RelativePaths, ReportFindingsAndNotesAreShortened) {
  Report r;
  r.summary.source = "/w/out/capture.npud.json";
  Finding f;
  f.location.file = "/w/train.py";
  f.message = "sync at /w/train.py:3";
  f.notes = {"called from: /w/lib.py:9"};
  r.findings.push_back(f);
  r.notes = {"other capture: /w/out/capture.12.npud.json"};
  shorten_paths_under(r, "/w");
  EXPECT_EQ(r.summary.source, "out/capture.npud.json");
  EXPECT_EQ(r.findings[0].location.file, "train.py");
  EXPECT_EQ(r.findings[0].message, "sync at train.py:3");
  EXPECT_EQ(r.findings[0].notes[0], "called from: lib.py:9");
  EXPECT_EQ(r.notes[0], "other capture: out/capture.12.npud.json");
}

}  // namespace
}  // namespace npud
