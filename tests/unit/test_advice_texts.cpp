// The advice texts (data/texts/*.tsv): every row renders, every key is used by the code and
// every call fills exactly its text's placeholders; conditions pick rows by version; the shim's
// generated copy (python/npu_doctor/_advice_texts.py) matches data/texts/shim.tsv.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "file_text.hpp"
#include "knowledge/advice_texts.hpp"
#include "knowledge/knowledge.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;

// Every source file of one language under `dir` (recursively), by path.
std::map<std::string, std::string> sources(const fs::path& dir, std::set<std::string> extensions) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && extensions.count(e.path().extension().string()))
      out.emplace(e.path().string(), test::file_text(e.path()));
  return out;
}

// The code that reads a row: the shim's Python for shim.tsv, the C++ sources for the others.
const std::map<std::string, std::string>& code_for(bool shim) {
  static const auto cpp = sources(fs::path(NPUD_SOURCE_DIR) / "src", {".cpp", ".hpp"});
  static const auto py = sources(fs::path(NPUD_SOURCE_DIR) / "python" / "npu_doctor", {".py"});
  return shim ? py : cpp;
}
const std::map<std::string, std::string>& code_for(const AdviceRow& r) { return code_for(r.file == "shim.tsv"); }

TEST(AdviceTexts, EveryRowRendersWithItsPlaceholdersFilled) {
  const auto& rows = AdviceTexts::builtin().rows();
  ASSERT_GT(rows.size(), 150u);
  std::set<std::string> fallback, seen;
  for (const AdviceRow& r : rows) {
    SCOPED_TRACE(r.file + " line " + std::to_string(r.line));
    std::vector<std::string> names = placeholders_of(r.text);
    std::vector<AdviceArg> args;
    for (const auto& n : names) args.emplace_back(n, "<" + n + ">");
    std::string text;
    ASSERT_NO_THROW(text = fill_placeholders(r.text, args));
    for (const auto& n : names) EXPECT_NE(text.find("<" + n + ">"), std::string::npos);
    EXPECT_TRUE(placeholders_of(text).empty()) << text;
    EXPECT_EQ(text.find('\t'), std::string::npos) << "a tab in a finding's text";
    std::string id = r.rule + "/" + r.key;
    EXPECT_TRUE(seen.insert(id + "/" + r.when).second) << "two rows " << id << " " << r.when;
    if (r.when == "*") fallback.insert(id);
  }
  for (const AdviceRow& r : rows) EXPECT_TRUE(fallback.count(r.rule + "/" + r.key)) << r.rule << " " << r.key << ": no * row";
}

// A row is used when one source file names both its rule and its key as string literals (keys
// also come from tables and ternaries: `advice("SYNC001", fix_key(c))`).
TEST(AdviceTexts, EveryRowIsUsedNoOrphans) {
  for (const AdviceRow& r : AdviceTexts::builtin().rows()) {
    bool used = false;
    for (const auto& [path, text] : code_for(r))
      if (text.find("\"" + r.rule + "\"") != std::string::npos && text.find("\"" + r.key + "\"") != std::string::npos)
        used = true;
    EXPECT_TRUE(used) << r.file << " line " << r.line << ": " << r.rule << " " << r.key << " is used nowhere";
  }
}

// Each call that names its key fills exactly the placeholders of every row of that key:
// C++ `advice("R", "k", {{"name", ...}, ...})`, Python `advice("r", "k", name=...)`.
TEST(AdviceTexts, EveryCallFillsItsPlaceholders) {
  std::map<std::string, std::vector<const AdviceRow*>> by_key;
  for (const AdviceRow& r : AdviceTexts::builtin().rows()) by_key[r.rule + "/" + r.key].push_back(&r);
  const std::regex call(R"re(\badvice\(\s*"([^"]+)",\s*"([^"]+)")re");
  const std::regex cpp_arg(R"re(\{\s*"([a-z_][a-z0-9_]*)",)re");
  const std::regex py_arg(R"re(\b([a-z_][a-z0-9_]*)=)re");
  size_t calls = 0;
  for (const auto* code : {&code_for(false), &code_for(true)}) {
    for (const auto& [path, text] : *code) {
      bool python = path.ends_with(".py");
      for (auto it = std::sregex_iterator(text.begin(), text.end(), call); it != std::sregex_iterator(); ++it) {
        // The call's arguments: up to its closing parenthesis.
        size_t at = size_t(it->position(0)) + size_t(it->length(0)), depth = 1, end = at;
        for (; end < text.size() && depth > 0; ++end) depth += text[end] == '(' ? 1 : text[end] == ')' ? -1 : 0;
        std::string args = text.substr(at, end - at);
        // Nested advice() calls fill their own placeholders: left out of this call's.
        for (size_t n = args.find("advice("); n != std::string::npos; n = args.find("advice(")) {
          size_t d = 1, e = n + 7;
          for (; e < args.size() && d > 0; ++e) d += args[e] == '(' ? 1 : args[e] == ')' ? -1 : 0;
          args.erase(n, e - n);
        }
        std::set<std::string> given;
        const std::regex& arg = python ? py_arg : cpp_arg;
        for (auto a = std::sregex_iterator(args.begin(), args.end(), arg); a != std::sregex_iterator(); ++a)
          given.insert((*a)[1]);
        if (python) given.erase("versions");
        std::string id = (*it)[1].str() + "/" + (*it)[2].str();
        auto rows = by_key.find(id);
        if (rows == by_key.end()) {
          ADD_FAILURE() << path << ": advice(" << id << ") has no row in data/texts";
          continue;
        }
        ++calls;
        for (const AdviceRow* r : rows->second) {
          auto names = placeholders_of(r->text);
          EXPECT_EQ(given, std::set<std::string>(names.begin(), names.end()))
              << path << ": advice(" << id << ") against " << r->file << " line " << r->line;
        }
      }
    }
  }
  EXPECT_GT(calls, 100u);
}

TEST(AdviceTexts, ConditionsPickTheFirstRowTheVersionsMeet) {
  AdviceTexts t;
  t.parse("test.tsv",
          "# comment\n"
          "R\tfix\ttorch_npu>=2.1,<2.3;torch>=2.1\tnew {op}\n"
          "R\tfix\ttransformers<4.46\told transformers\n"
          "R\tfix\t*\tany {op}\\nsecond line\n");
  EXPECT_EQ(t.row("R", "fix").text, "any {op}\nsecond line");   // unknown versions: the * row
  EXPECT_EQ(t.row("R", "fix", {.torch = "2.1.0", .torch_npu = "2.2.0"}).text, "new {op}");
  EXPECT_EQ(t.row("R", "fix", {.torch = "2.1.0", .torch_npu = "2.3.0"}).text, "any {op}\nsecond line");
  EXPECT_EQ(t.row("R", "fix", {.torch_npu = "2.2.0"}).text, "any {op}\nsecond line");   // torch unknown
  const std::pair<std::string_view, std::string_view> libs[] = {{"transformers", "4.40.1"}};
  EXPECT_EQ(t.row("R", "fix", {.libraries = libs}).text, "old transformers");
  EXPECT_THROW(t.row("R", "nothing"), std::logic_error);
  EXPECT_THROW(t.parse("bad.tsv", "R\tfix\t\ttext\n"), KnowledgeError);
  EXPECT_THROW(t.parse("bad.tsv", "R\tfix\ttext\n"), KnowledgeError);
}

TEST(AdviceTexts, PlaceholdersAreNamesInBracesOtherBracesAreText) {
  EXPECT_EQ(fill_placeholders("x={\"a\": {n}} {} {N} {n}", std::vector<AdviceArg>{{"n", 3}}), "x={\"a\": 3} {} {N} 3");
  EXPECT_EQ(fill_placeholders("{s} {d}", std::vector<AdviceArg>{{"s", std::string("t")}, {"d", 65536.0}}), "t 65536");
  EXPECT_THROW(fill_placeholders("{a}", {}), std::logic_error);
  EXPECT_THROW(fill_placeholders("a", std::vector<AdviceArg>{{"a", 1}}), std::logic_error);
  EXPECT_EQ(advice("AMP004", "fix", {{"init_scale", ""}}).substr(0, 36), "scaler = torch.npu.amp.GradScaler() ");
}

// The shim reads shim.tsv through the module tools/gen_shim_data.py writes from it.
TEST(AdviceTexts, ShimCopyIsCurrent) {
  fs::path root = NPUD_SOURCE_DIR;
  std::string tsv = test::file_text(root / "data" / "texts" / "shim.tsv");
  std::string py = test::file_text(root / "python" / "npu_doctor" / "_advice_texts.py");
  std::string head = "TSV = r\"\"\"";
  size_t at = py.find(head);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(py.substr(at + head.size()), tsv + "\"\"\"\n") << "run tools/gen_shim_data.py";
}

}  // namespace
}  // namespace npud
