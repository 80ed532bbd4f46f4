// SARIF for GitHub code scanning (issue 40): paths relative to the project root, a physical
// location on every result, fingerprints that survive line moves, and `--format github`.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <simdjson.h>

#include "report/sarif.hpp"
#include "scratch_path.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;

const SarifPaths kPaths{"/home/u/proj", "/home/u/proj/sub"};

TEST(SarifPaths, FilesAreSaidRelativeToTheProjectRoot) {
  EXPECT_EQ(project_relative_path("/home/u/proj/src/train.py", kPaths), "src/train.py");
  EXPECT_EQ(project_relative_path("train.py", kPaths), "sub/train.py");          // from the working directory
  EXPECT_EQ(project_relative_path("./a/../b.py", kPaths), "sub/b.py");
  EXPECT_EQ(project_relative_path("out\\capture.npud.json", kPaths), "sub/out/capture.npud.json");
}

TEST(SarifPaths, OutsideTheRootTheyClimbWithDotDotNeverAbsolute) {
  EXPECT_EQ(project_relative_path("/home/u/shared/trace.json", kPaths), "../shared/trace.json");
  EXPECT_EQ(project_relative_path("/tmp/cap/capture.npud.json", kPaths), "../../../tmp/cap/capture.npud.json");
  EXPECT_EQ(project_relative_path("../../other/x.py", kPaths), "../other/x.py");
  EXPECT_EQ(project_relative_path("/a/b.py", SarifPaths{"/", "/"}), "a/b.py");
  // A root given with a trailing '/' is the same root.
  EXPECT_EQ(project_relative_path("/r/x.py", sarif_paths("/r/")), "x.py");
}

TEST(SarifPaths, UrisArePercentEncodedRelativeReferences) {
  EXPECT_EQ(sarif_uri("src/my train.py"), "src/my%20train.py");
  EXPECT_EQ(sarif_uri("../C:/x#1.py"), "../C%3A/x%231.py");   // no scheme can appear
}

TEST(SarifPaths, TheProjectRootIsTheNearestFolderWithGit) {
  const fs::path top = test::scratch_path("npud_root");
  fs::create_directories(top / "repo" / "a" / "b");
  std::ofstream(top / "repo" / ".git") << "gitdir: /elsewhere\n";   // a worktree's .git is a file
  EXPECT_EQ(find_project_root(top / "repo" / "a" / "b"), top / "repo");
  EXPECT_EQ(find_project_root(top / "repo"), top / "repo");
  fs::remove(top / "repo" / ".git");
  bool git_above = false;   // a scratch folder inside some checkout: nothing more to assert
  for (fs::path p = top; !p.empty() && p != p.root_path(); p = p.parent_path()) git_above |= fs::exists(p / ".git");
  if (!git_above) {
    EXPECT_EQ(find_project_root(top / "repo" / "a"), top / "repo" / "a");   // none: the folder itself
  }
  fs::remove_all(top);
}

// A finding at file:line as the SARIF log fingerprints it.
std::string fingerprint_at(const fs::path& file, int line, std::string_view op = "aten::item") {
  Finding f;
  f.rule = "SYNC001";
  f.location.file = file.string();
  f.location.line = line;
  f.location.op = std::string(op);
  SourceLineCache lines(nullptr);
  SarifResult r = sarif_result(f, "capture.npud.json", lines);
  const SarifPaths paths{file.parent_path(), file.parent_path()};
  return sarif_fingerprint(r.rule_id, project_relative_path(r.uri, paths), r);
}

TEST(SarifFingerprint, SurvivesTheLineMovingAndChangesWithItsText) {
  const fs::path file = test::scratch_path("npud_fp", ".py");
  std::ofstream(file) << "import torch\nx = torch.ones(2)\nv = x.sum().item()\n";
  const std::string before = fingerprint_at(file, 3);
  std::ofstream(file) << "import torch\n\n\n\nx = torch.ones(2)\n  v = x.sum().item()  \n";
  EXPECT_EQ(fingerprint_at(file, 6), before);                  // 3 lines down, other indentation
  EXPECT_EQ(fingerprint_at(file, 6, "aten::_local_scalar_dense"), before);   // the line decides, not the op
  std::ofstream(file) << "import torch\nx = torch.ones(2)\nv = x.mean().item()\n";
  EXPECT_NE(fingerprint_at(file, 3), before);                  // other source text
  fs::remove(file);
  // Unreadable now: the op name stands in, still without the line number.
  EXPECT_EQ(fingerprint_at(file, 3), fingerprint_at(file, 40));
  EXPECT_NE(fingerprint_at(file, 3), fingerprint_at(file, 3, "aten::nonzero"));
  EXPECT_EQ(before.size(), 16u);
}

TEST(SarifFingerprint, HoldsNoCountTimeOrMessage) {
  SarifResult a, b;
  a.rule_id = b.rule_id = "IDLE001";
  a.logical_location = b.logical_location = "Optimizer.step";
  a.message = "device 0 idle 669 ms in 506 gaps";
  b.message = "device 0 idle 12 ms in 3 gaps";
  EXPECT_EQ(sarif_fingerprint("IDLE001", "t.json", a), sarif_fingerprint("IDLE001", "t.json", b));
  EXPECT_NE(sarif_fingerprint("IDLE001", "t.json", a), sarif_fingerprint("IDLE001", "u.json", a));
  EXPECT_NE(sarif_fingerprint("IDLE001", "t.json", a), sarif_fingerprint("SYNC001", "t.json", a));
}

SarifLog two_alike_and_one_without_file() {
  SarifLog log;
  log.paths = kPaths;
  log.rules.push_back(sarif_rule("SYNC001", "sync", Severity::Warning));
  Finding f;
  f.rule = "SYNC001";
  f.message = "aten::item: 3 syncs, 1.2 ms";
  f.location.op = "aten::item";
  SourceLineCache lines(nullptr);
  for (int i = 0; i < 2; ++i) log.results.push_back(sarif_result(f, "/home/u/proj/prof/trace.json", lines));
  f.location.file = "/home/u/lib/model.py";
  f.location.line = 12;
  log.results.push_back(sarif_result(f, "/home/u/proj/prof/trace.json", lines));
  return log;
}

TEST(SarifRender, EveryResultHasARelativePhysicalLocationAndAFingerprint) {
  std::ostringstream os;
  render_sarif(os, two_alike_and_one_without_file());
  const std::string text = os.str();
  simdjson::dom::parser parser;
  simdjson::padded_string json(text);
  simdjson::dom::element run = parser.parse(json)["runs"].at(0);
  EXPECT_EQ(std::string_view(run["originalUriBaseIds"]["%SRCROOT%"]["uri"]), "file:///home/u/proj/");
  std::vector<std::string> uris, fingerprints;
  for (auto res : run["results"].get_array()) {
    auto pl = res["locations"].at(0)["physicalLocation"];
    uris.emplace_back(std::string_view(pl["artifactLocation"]["uri"]));
    EXPECT_EQ(std::string_view(pl["artifactLocation"]["uriBaseId"]), "%SRCROOT%");
    EXPECT_GE(int64_t(pl["region"]["startLine"]), 1);
    fingerprints.emplace_back(std::string_view(res["partialFingerprints"]["npuDoctor/v1"]));
  }
  EXPECT_EQ(uris, (std::vector<std::string>{"prof/trace.json", "prof/trace.json", "../lib/model.py"}));
  // The two alike differ only by their occurrence.
  ASSERT_EQ(fingerprints.size(), 3u);
  EXPECT_EQ(fingerprints[0].substr(0, 16), fingerprints[1].substr(0, 16));
  EXPECT_TRUE(fingerprints[0].ends_with(":1") && fingerprints[1].ends_with(":2") && fingerprints[2].ends_with(":1"));
  EXPECT_EQ(text.find("file://"), text.rfind("file://"));   // only the project root's
  EXPECT_EQ(text.find("helpUri"), std::string::npos);
}

TEST(GithubFormat, OneEscapedWorkflowCommandPerResult) {
  SarifLog log = two_alike_and_one_without_file();
  log.results[0].severity = Severity::Info;
  log.results[1].severity = Severity::Error;
  log.results[1].uri = "/home/u/proj/a,b:c.json";
  log.results[2].message = "100% of it\r\nsecond line";
  log.results[2].column = 5;
  std::ostringstream os;
  render_github(os, log);
  EXPECT_EQ(os.str(),
            "::notice file=prof/trace.json,line=1,title=SYNC001::aten::item: 3 syncs, 1.2 ms\n"
            "::error file=a%2Cb%3Ac.json,line=1,title=SYNC001::aten::item: 3 syncs, 1.2 ms\n"
            "::warning file=../lib/model.py,line=12,col=5,title=SYNC001::100%25 of it%0D%0Asecond line\n");
}

}  // namespace
}  // namespace npud
