// The configuration reader (the TOML subset, pyproject.toml's table, errors with file:line:col),
// the suppression comments every command shares, and baseline matching.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "pipeline/baseline.hpp"
#include "cli/config.hpp"
#include "source/suppressions.hpp"
#include "util/mini_toml.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "npud-config-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path write(const std::string& name, const std::string& text) const {
    fs::create_directories((path / name).parent_path());
    std::ofstream(path / name) << text;
    return path / name;
  }
};

std::string error_of(const std::string& path) {
  try {
    read_config_file(path);
  } catch (const TomlError& e) {
    return e.what();
  }
  return "";
}

// The error reading `text` as c.toml with every table wanted ("" when none).
std::string toml_error(const std::string& text) {
  try {
    read_toml_tables(text, "c.toml", [](std::string_view) { return true; });
  } catch (const TomlError& e) {
    return e.what();
  }
  return "";
}

TEST(MiniToml, ReadsWantedTablesAndSkipsOthers) {
  const std::string text =
      "[project]\nname = \"x\"\nclassifiers = [\n  \"a]\", # ]\n]\n"
      "[tool.other]\nv = '''\n[tool.npu-doctor]\nfake = 1\n'''\nn = 3\n"
      "[tool.npu-doctor]\nselect = [\"SYNC\",\n  'CUDA002',  # why\n]\nfail-on = \"warning\"\n"
      "per-file-ignores = { \"tests/*.py\" = [\"SYNC001\"] }\n";
  auto tables = read_toml_tables(text, "p.toml", [](std::string_view n) { return n == "tool.npu-doctor"; });
  ASSERT_EQ(tables.size(), 1u);
  ASSERT_EQ(tables[0].entries.size(), 3u);
  EXPECT_EQ(std::get<TomlStrings>(tables[0].entries[0].value.v), (TomlStrings{"SYNC", "CUDA002"}));
  EXPECT_EQ(tables[0].entries[1].pos.line, 16);
  EXPECT_EQ(std::get<std::string>(tables[0].entries[1].value.v), "warning");
  const auto& inline_table = std::get<TomlInlineTable>(tables[0].entries[2].value.v);
  ASSERT_EQ(inline_table.size(), 1u);
  EXPECT_EQ(inline_table[0].first, "tests/*.py");
}

TEST(MiniToml, RefusesOtherValuesWithFileLineColumn) {
  EXPECT_EQ(toml_error("a = \"x\"\nb = 3\n").substr(0, 11), "c.toml:2:5:");
  EXPECT_NE(toml_error("a.b = \"x\"\n").find("c.toml:1:2: dotted keys"), std::string::npos);
  EXPECT_NE(toml_error("a = \"\"\"x\"\"\"\n").find("multi-line"), std::string::npos);
  EXPECT_NE(toml_error("a = \"x\n").find("does not end"), std::string::npos);
  EXPECT_NE(toml_error("a = [\"x\" \"y\"]\n").find("expected ','"), std::string::npos);
}

// Issue 42: what TOML forbids is refused, never "the last one wins" or "both are read".
TEST(MiniToml, RefusesAKeyOrTableGivenTwice) {
  EXPECT_NE(toml_error("select = [\"A\"]\nselect = [\"B\"]\n").find("c.toml:2:1: 'select' is given twice (first at line 1)"),
            std::string::npos);
  EXPECT_NE(toml_error("[t]\na = \"1\"\n[u]\n[t]\nb = \"2\"\n").find("c.toml:4:1: [t] is defined twice (first at line 1)"),
            std::string::npos);
  EXPECT_EQ(toml_error("[t]\na = \"1\"\n[u]\na = \"2\"\n"), "");   // the same key in two tables is fine
}

TEST(Config, PerFileIgnoresThatCanNeverMatchAreRefused) {
  TempDir d;
  for (const char* glob : {"/*", "../x/*.py", ".."}) {
    d.write("npu-doctor.toml", fmt::format("[per-file-ignores]\n\"{}\" = [\"SYNC001\"]\n", glob));
    EXPECT_THROW(read_config_file((d.path / "npu-doctor.toml").string()), TomlError) << glob;
  }
  // A folder whose name starts with two dots is inside, and matches.
  d.write("npu-doctor.toml", "fail-on = \"ERROR\"\n[per-file-ignores]\n\"..data/*.py\" = [\"SYNC001\"]\n");
  Config c = read_config_file((d.path / "npu-doctor.toml").string());
  EXPECT_EQ(c.fail_on, "error");   // any case, as rule ids
  EXPECT_TRUE(c.per_file_ignores.ignores((d.path / "..data/a.py").string(), "SYNC001"));
}

TEST(Config, PyprojectTableAndErrors) {
  TempDir d;
  auto p = d.write("pyproject.toml", "[tool.npu-doctor]\nignore = \"sync001\"\ntorch-npu = \"2.1.0\"\n"
                                     "[tool.npu-doctor.per-file-ignores]\n\"gen/*.py\" = [\"CUDA\"]\n");
  Config c = read_config_file(p.string());
  EXPECT_EQ(c.file, p.string());
  EXPECT_EQ(c.ignore, std::vector<std::string>{"SYNC001"});
  EXPECT_EQ(c.torch_npu, "2.1.0");
  ASSERT_EQ(c.per_file_ignores.rules.size(), 1u);
  EXPECT_TRUE(c.per_file_ignores.ignores((d.path / "gen/a.py").string(), "CUDA002"));
  EXPECT_FALSE(c.per_file_ignores.ignores((d.path / "src/a.py").string(), "CUDA002"));

  auto bad = d.write("bad/npu-doctor.toml", "select = [\"SYNC\"]\nfail_on = \"x\"\n");
  EXPECT_NE(error_of(bad.string()).find("npu-doctor.toml:2:1: unknown key 'fail_on'"), std::string::npos);
  auto typo = d.write("typo/npu-doctor.toml", "select = [\"SINC\"]\n");
  EXPECT_NE(error_of(typo.string()).find(":1:10: select: 'SINC' is no rule id, id prefix or name; did you mean SYNC?"),
            std::string::npos);
  // names as `rules` lists them, any case, as on the command line (model/rule_filter.hpp)
  auto named = d.write("named/npu-doctor.toml", "select = [\"Host-Device-Sync\"]\n"
                                                "[per-file-ignores]\n\"*.py\" = [\"device-idle-gap\", \"cuda00\"]\n");
  Config n = read_config_file(named.string());
  EXPECT_EQ(n.select, std::vector<std::string>{"HOST-DEVICE-SYNC"});
  EXPECT_TRUE(n.per_file_ignores.ignores((d.path / "named/a.py").string(), "IDLE001"));
  EXPECT_TRUE(n.per_file_ignores.ignores((d.path / "named/a.py").string(), "CUDA006"));
  EXPECT_FALSE(n.per_file_ignores.ignores((d.path / "named/a.py").string(), "SYNC001"));
}

TEST(Config, NearestFileWinsAndPlainPyprojectDoesNotCount) {
  TempDir d;
  d.write("npu-doctor.toml", "ignore = [\"SYNC\"]\n");
  d.write("a/pyproject.toml", "[project]\nname = \"a\"\n");
  d.write("a/b/c.py", "x = 1\n");
  EXPECT_EQ(find_config((d.path / "a/b/c.py").string()).file, (d.path / "npu-doctor.toml").string());
  d.write("a/pyproject.toml", "[tool.npu-doctor]\nselect = [\"CUDA\"]\n");
  Config c = find_config((d.path / "a/b").string());
  EXPECT_EQ(c.file, (d.path / "a/pyproject.toml").string());
  EXPECT_TRUE(c.ignore.empty());
}

TEST(Suppressions, Syntax) {
  auto one = [](std::string_view line) {
    auto v = parse_suppressions(line);
    return v.size() == 1 ? v[0] : SuppressionComment{true, {"NONE"}};
  };
  EXPECT_EQ(one("x = y.item()  # npu-doctor: ignore[SYNC001, cuda002]").ids,
            (std::vector<std::string>{"SYNC001", "CUDA002"}));
  EXPECT_TRUE(one("x  # npu-doctor: ignore").ids.empty());
  EXPECT_FALSE(one("x  # npu-doctor: ignore").file_level);
  EXPECT_TRUE(one("# npu-doctor: ignore-file[CUDA002]").file_level);
  EXPECT_EQ(one("x  # noqa: SYNC001").ids, std::vector<std::string>{"SYNC001"});
  EXPECT_EQ(parse_suppressions("x  # noqa: E501  # npu-doctor: ignore[SYNC001]")[0].ids, std::vector<std::string>{"E501"});
  EXPECT_EQ(parse_suppressions("x  # noqa: E501  # npu-doctor: ignore[SYNC001]").size(), 2u);
  EXPECT_TRUE(parse_suppressions("x  # noqa").empty());          // a bare noqa is flake8's, not ours
  EXPECT_TRUE(parse_suppressions("x  # npu-doctor: ignore[]").empty());
  EXPECT_TRUE(parse_suppressions("x  # npu-doctor: ignored").empty());
  // Issue 42 F-4: blanks before the bracket name ids, never every rule (line or file).
  for (std::string_view blank : {" ", "\t", "  \t "}) {
    EXPECT_EQ(one("x  # npu-doctor: ignore" + std::string(blank) + "[SYNC101]").ids, std::vector<std::string>{"SYNC101"});
    auto file = one("# npu-doctor: ignore-file" + std::string(blank) + "[SYNC101]");
    EXPECT_TRUE(file.file_level);
    EXPECT_EQ(file.ids, std::vector<std::string>{"SYNC101"});
  }
  // ruff's noqa stops at the first word that is no code: an explanation naming a rule is prose.
  EXPECT_EQ(one("x  # noqa: E501 -- keeps CUDA002 style").ids, std::vector<std::string>{"E501"});
  EXPECT_EQ(one("x  # noqa: E501,SYNC001 CUDA002 why").ids, (std::vector<std::string>{"E501", "SYNC001", "CUDA002"}));
  EXPECT_TRUE(parse_suppressions("x  # noqa: see CUDA002").empty());

  FileSuppressions f = file_suppressions({"import torch", "# npu-doctor: ignore-file[CUDA002]", "y.item()  # noqa: SYNC001"});
  EXPECT_TRUE(f.suppressed("CUDA002", 1));
  EXPECT_TRUE(f.suppressed("SYNC001", 3));
  EXPECT_FALSE(f.suppressed("SYNC001", 1));
  EXPECT_FALSE(f.suppressed("SYNC101", 3));
}

TEST(Baseline, MatchesByLineTextNotLineNumber) {
  TempDir d;
  auto src = d.write("t.py", "a = 1\nx = loss.item()\n");
  auto base = (d.path / "baseline.json").string();
  SnippetPolicy policy{{fs::canonical(d.path)}};
  auto finding = [&](int line, std::string message) {
    Finding f;
    f.rule = "SYNC001";
    f.message = std::move(message);
    f.location.file = src.string();
    f.location.line = line;
    return f;
  };
  std::vector<Finding> today{finding(2, "3 syncs")};
  EXPECT_EQ(apply_baseline(today, "", base, "run", policy), 0u);
  EXPECT_EQ(today.size(), 1u);   // writing keeps them
  d.write("t.py", "import torch\na = 1\nx = loss.item()\ny = z.item()\n");   // a line added above
  std::vector<Finding> later{finding(3, "5 syncs"), finding(4, "1 sync")};
  EXPECT_EQ(apply_baseline(later, base, "", "run", policy), 1u);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].location.line, 4);
  std::ofstream(d.path / "not.json") << "{\"a\": 1}";
  EXPECT_THROW(Baseline::load((d.path / "not.json").string()), std::runtime_error);
}

}  // namespace
}  // namespace npud
