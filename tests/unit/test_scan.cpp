// The static scan: per-rule inputs with inline `# expect: ID` comments (tests/data/scan),
// fix round-trips, diffs, skipped inputs, filters and SARIF structure.
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

#include "file_text.hpp"
#include "report/sarif.hpp"
#include "source/api_map.hpp"
#include "source/fixes.hpp"
#include "source/scanner.hpp"
#include "source/source_encoding.hpp"
#include "source/statement_chunks.hpp"
#include "util/embedded.hpp"

namespace fs = std::filesystem;
using namespace npud;

namespace {

std::vector<fs::path> scan_inputs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(NPUD_TEST_DATA) / "scan"))
    if (e.path().extension() == ".py") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// "line:ID" for every `# expect: A, B` comment. An id may say more of its finding in
// parentheses, kept in `quals` as "line:ID:what": `CUDA007(no fix)` (its fix is withheld),
// `CUDA007(fix)`, `CONTIG101(warning)`.
std::multiset<std::string> expectations(const std::string& text, std::string& version,
                                        std::multiset<std::string>* quals = nullptr) {
  std::multiset<std::string> out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (auto v = line.find("# torch-npu: "); v != std::string::npos) version = line.substr(v + 13);
    auto p = line.find("# expect: ");
    if (p == std::string::npos) continue;
    std::string ids = line.substr(p + 10);
    std::istringstream is(ids);
    std::string id;
    while (std::getline(is, id, ',')) {
      id.erase(0, id.find_first_not_of(' '));
      id.erase(id.find_last_not_of(' ') + 1);
      if (id.empty()) continue;
      std::string key = std::to_string(n) + ":" + id.substr(0, id.find('('));
      if (auto open = id.find('('); open != std::string::npos && quals)
        quals->insert(key + ":" + id.substr(open + 1, id.size() - open - 2));
      out.insert(key);
    }
  }
  return out;
}

// What a qualifier in an expectation says of a finding.
std::string qualifier_of(const Finding& f, std::string_view qual) {
  if (qual == "fix" || qual == "no fix") return f.fixable() ? "fix" : "no fix";
  return std::string(to_string(f.severity));
}

ScanOptions options_for(const std::string& version) {
  ScanOptions o;
  if (!version.empty()) o.version = Knowledge::builtin().find(version);
  return o;
}

#define REQUIRE_SCAN() \
  if (!scan_available()) GTEST_SKIP() << "built without the tree-sitter Python grammar (NPUD_SCAN off)"

}  // namespace

TEST(Scan, InlineExpectationsPerRuleInput) {
  REQUIRE_SCAN();
  auto inputs = scan_inputs();
  ASSERT_GE(inputs.size(), 6u);
  for (const auto& p : inputs) {
    SCOPED_TRACE(p.string());
    std::string text = test::file_text(p), version;
    std::multiset<std::string> quals;
    auto expected = expectations(text, version, &quals);
    // (files that must stay quiet: amp_scaled, activations_cuda_only)
    ASSERT_FALSE(expected.empty() && p.stem() != "amp_scaled" && p.stem() != "activations_cuda_only");
    ScanOptions opts = options_for(version);
    if (!version.empty()) {
      ASSERT_NE(opts.version, nullptr) << version;
    }
    FileResult r = scan_source(p.string(), text, opts);
    ASSERT_EQ(r.status, FileStatus::Scanned);
    EXPECT_FALSE(r.syntax_error);
    std::multiset<std::string> got;
    for (const auto& f : r.findings) got.insert(std::to_string(f.location.line) + ":" + f.rule);
    for (const auto& e : expected) EXPECT_TRUE(got.count(e)) << "missing " << e;
    for (const auto& g : got) EXPECT_TRUE(expected.count(g)) << "unexpected " << g;
    // Each qualified expectation is met by a finding of its own on that line.
    std::multiset<std::string> seen;
    for (const auto& f : r.findings)
      for (std::string_view what : {"fix", "severity"})
        seen.insert(std::to_string(f.location.line) + ":" + f.rule + ":" + qualifier_of(f, what));
    for (const auto& q : quals) EXPECT_GE(seen.count(q), quals.count(q)) << "no finding that is " << q;
  }
}

// #18.12: large files are parsed a piece of top-level statements at a time. Cutting every
// input at every statement (pieces of 1 byte) must give exactly the findings and edits of one
// whole parse: rules that decide at finish() keep spans, never nodes of a freed tree.
TEST(Scan, PiecewiseParseFindsWhatOneParseFinds) {
  REQUIRE_SCAN();
  auto key = [](const FileResult& r) {
    std::vector<std::string> out;
    for (const auto& f : r.findings) {
      std::string k = fmt::format("{}:{}-{}:{} {} {} | {}", f.location.line, f.location.column, f.location.end_line, f.location.end_column, f.rule, f.message, f.fix);
      for (const auto& e : f.edits) k += fmt::format(" [{},{})={}", e.start, e.end, e.replacement);
      out.push_back(k);
    }
    return out;
  };
  for (const auto& p : scan_inputs()) {
    SCOPED_TRACE(p.string());
    std::string text = test::file_text(p), version;
    expectations(text, version);
    ScanOptions whole = options_for(version), pieces = whole;
    pieces.piece_bytes = 1;
    ASSERT_GT(statement_chunks(text, 1).size(), 3u);
    EXPECT_EQ(key(scan_source(p.string(), text, pieces)), key(scan_source(p.string(), text, whole)));
  }
}

TEST(Scan, StatementPiecesCutOnlyBetweenTopLevelStatements) {
  std::string src =
      "import torch\n"                            // 0: a piece starts here
      "x = (1,\n2)\n"                             // 13: brackets join the next line
      "s = \"\"\"\ny = 2\n\"\"\"\n"               // 24: a triple-quoted string
      "t = 1 + \\\n3\n"                         // 42: a backslash continuation
      "@dec\n# note\ndef f():\n    return 1\n"   // 54: decorator, comment, def: one piece
      "if x:\n    pass\nelse:\n    pass\n"        // 88: else stays with its if
      "z = '#(' # )\n";                            // 118: brackets in strings/comments
  std::vector<uint32_t> starts, rows;
  for (const auto& c : statement_chunks(src, 1)) {
    starts.push_back(c.start_byte);
    rows.push_back(c.start_row);
  }
  EXPECT_EQ(starts, (std::vector<uint32_t>{0, 13, 24, 42, 54, 88, 118}));
  EXPECT_EQ(rows, (std::vector<uint32_t>{0, 1, 3, 6, 8, 12, 16}));
  EXPECT_EQ(statement_chunks(src, 1).back().end_byte, src.size());
  EXPECT_EQ(statement_chunks(src, 1000).size(), 1u);
}

TEST(Scan, FixesRoundTripToCleanParse) {
  REQUIRE_SCAN();
  for (const auto& p : scan_inputs()) {
    SCOPED_TRACE(p.string());
    std::string text = test::file_text(p), version;
    expectations(text, version);
    ScanOptions opts = options_for(version);
    FileResult r = scan_source(p.string(), text, opts);
    auto edits = collect_edits(r.findings);
    std::string fixed = apply_edits(text, edits);
    FileResult again = scan_source(p.string(), fixed, opts);
    EXPECT_FALSE(again.syntax_error);
    for (const auto& f : again.findings) EXPECT_FALSE(f.fixable()) << "still fixable: " << f.location.line << " " << f.rule;
    if (!edits.empty()) {
      EXPECT_NE(fixed, text);
    }
  }
}

TEST(Scan, CudaFixesAreExact) {
  REQUIRE_SCAN();
  std::string src =
      "import torch\n"
      "x = torch.zeros(2, device='cuda:1').cuda()\n"
      "torch.cuda.synchronize()\n";
  FileResult r = scan_source("t.py", src, {});
  std::string fixed = apply_edits(src, collect_edits(r.findings));
  EXPECT_EQ(fixed,
            "import torch\n"
            "import torch_npu\n"
            "x = torch.zeros(2, device='npu:1').npu()\n"
            "torch.npu.synchronize()\n");
}

TEST(Scan, ImportTorchNpuKeepsIndentAndHandlesMissingNewline) {
  REQUIRE_SCAN();
  std::string src = "try:\n    import torch\nexcept ImportError:\n    pass\nx.cuda()";
  FileResult r = scan_source("t.py", src, {});
  std::string fixed = apply_edits(src, collect_edits(r.findings));
  EXPECT_EQ(fixed, "try:\n    import torch\n    import torch_npu\nexcept ImportError:\n    pass\nx.npu()");
  std::string tail = "x.cuda()\nimport torch";
  FileResult r2 = scan_source("t.py", tail, {});
  EXPECT_EQ(apply_edits(tail, collect_edits(r2.findings)), "x.npu()\nimport torch\nimport torch_npu\n");
}

// #18.8: fixes that changed behaviour. A CRLF file keeps CRLF; `import torch_npu` never goes
// under `if TYPE_CHECKING:` (it would never run); a file with its own cuda() method gets no
// automatic `.cuda()` rewrite (the call may be that method).
TEST(Scan, FixesKeepLineEndingsRuntimeImportsAndOwnMethods) {
  REQUIRE_SCAN();
  std::string crlf = "import torch\r\nx = y.cuda()\r\n";
  EXPECT_EQ(apply_edits(crlf, collect_edits(scan_source("t.py", crlf, {}).findings)),
            "import torch\r\nimport torch_npu\r\nx = y.npu()\r\n");
  std::string typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import torch\nx = y.cuda()\n";
  std::string fixed = apply_edits(typed, collect_edits(scan_source("t.py", typed, {}).findings));
  EXPECT_EQ(fixed.find("import torch_npu"), std::string::npos) << fixed;
  std::string own = "import torch\nclass Box:\n    def cuda(self):\n        return self\nb = Box().cuda()\n";
  FileResult r = scan_source("t.py", own, {});
  bool reported = false;
  for (const auto& f : r.findings) {
    if (f.rule != "CUDA002") continue;
    reported = true;
    EXPECT_FALSE(f.fixable());
    EXPECT_NE(f.fix.find("defines its own cuda()"), std::string::npos) << f.fix;
  }
  EXPECT_TRUE(reported);
}

// #18.8: Python ends lines at a lone CR too: no false PARSE001, the finding on its line, and
// the inserted import ends with CR like the file's other lines.
TEST(Scan, CarriageReturnOnlyFilesReadLikePythonReadsThem) {
  REQUIRE_SCAN();
  std::string cr = "import torch\r# old Mac editor\rx = y.cuda()\r";
  FileResult r = scan_source("t.py", cr, {});
  EXPECT_FALSE(r.syntax_error);
  EXPECT_EQ(r.lines, 3u);
  bool cuda = false;
  for (const auto& f : r.findings) cuda = cuda || (f.rule == "CUDA002" && f.location.line == 3 && f.location.column == 5);
  EXPECT_TRUE(cuda);
  EXPECT_EQ(apply_edits(cr, collect_edits(r.findings)), "import torch\rimport torch_npu\r# old Mac editor\rx = y.npu()\r");
}

// #18.8: PEP 263 coding cookies. The file is converted for the scan and back for --fix.
TEST(Scan, CodingCookiesAreDecodedAndEncodedBack) {
  std::string latin = "# -*- coding: latin-1 -*-\n# caf\xe9\nx = 1\n";
  SourceEncoding e = decode_python_source(latin);
  EXPECT_EQ(e.error, "");
  EXPECT_EQ(e.name, "latin-1");
  EXPECT_EQ(latin, "# -*- coding: latin-1 -*-\n# caf\xc3\xa9\nx = 1\n");
  std::string back, why;
  ASSERT_TRUE(encode_python_source(latin, e.name, back, why));
  EXPECT_EQ(back, "# -*- coding: latin-1 -*-\n# caf\xe9\nx = 1\n");
  EXPECT_FALSE(encode_python_source("# \xe4\xb8\xad\n", "latin-1", back, why));  // no 中 in latin-1
  std::string gbk = "#!/usr/bin/env python\n# vim: set fileencoding=gbk :\ns = '\xd6\xd0'\n";
  e = decode_python_source(gbk);
  EXPECT_EQ(e.name, "gbk");
  EXPECT_NE(gbk.find("'\xe4\xb8\xad'"), std::string::npos) << gbk;
  std::string below_code = "x = 1\n# coding: latin-1\n\xe9\n";  // a cookie under code does not count
  e = decode_python_source(below_code);
  EXPECT_NE(e.error.find("not UTF-8 (invalid byte at offset 24)"), std::string::npos) << e.error;
  std::string unknown = "# coding: klingon\n";
  EXPECT_NE(decode_python_source(unknown).error.find("unknown encoding `klingon`"), std::string::npos);
  std::string bad_gbk = "# coding: gbk\n'\xff\xff'\n";
  EXPECT_NE(decode_python_source(bad_gbk).error.find("offset 15"), std::string::npos);
  std::string bom = "\xEF\xBB\xBF# coding: latin-1\n";
  EXPECT_NE(decode_python_source(bom).error.find("disagree"), std::string::npos);
  std::string utf8 = "# coding: utf_8\nx = '\xc3\xa9'\n";
  e = decode_python_source(utf8);
  EXPECT_EQ(e.name, "");
  EXPECT_EQ(e.error, "");
}

TEST(Scan, SyntaxErrorIsReportedAndFixesWithheld) {
  REQUIRE_SCAN();
  FileResult r = scan_source("bad.py", "import torch\ndef f(:\n    return x.cuda()\n", {});
  EXPECT_TRUE(r.syntax_error);
  bool parse = false;
  for (const auto& f : r.findings) {
    parse = parse || f.rule == "PARSE001";
    EXPECT_FALSE(f.fixable());
  }
  EXPECT_TRUE(parse);
}

TEST(Scan, BinaryAndNonUtf8AreSkipped) {
  REQUIRE_SCAN();
  FileResult bin = scan_source("b.py", std::string("import torch\0x", 14), {});
  EXPECT_EQ(bin.status, FileStatus::Binary);
  EXPECT_NE(bin.note.find("offset 12"), std::string::npos) << bin.note;
  FileResult latin = scan_source("l.py", "# caf\xe9\nx = 1\n", {});
  EXPECT_EQ(latin.status, FileStatus::NotUtf8);
  EXPECT_NE(latin.note.find("offset 5"), std::string::npos) << latin.note;
  EXPECT_EQ(first_invalid_utf8("\xed\xa0\x80"), 0u);      // surrogate
  EXPECT_EQ(first_invalid_utf8("\xc0\xaf"), 0u);          // overlong
  EXPECT_EQ(first_invalid_utf8("ok \xe2\x82\xac"), std::string_view::npos);
}

TEST(Scan, FilesInParallelSkipVenvsAndKeepOrder) {
  REQUIRE_SCAN();
  fs::path dir = fs::temp_directory_path() / ("npud_scan_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "pkg" / "venv");
  fs::create_directories(dir / "env2");
  fs::create_directories(dir / ".git");
  std::ofstream(dir / "env2" / "pyvenv.cfg") << "home = /usr\n";
  std::ofstream(dir / "env2" / "lib.py") << "x.cuda()\n";
  std::ofstream(dir / "pkg" / "venv" / "lib.py") << "x.cuda()\n";
  std::ofstream(dir / ".git" / "hook.py") << "x.cuda()\n";
  for (int i = 0; i < 20; ++i) std::ofstream(dir / "pkg" / ("m" + std::to_string(i) + ".py")) << "y = x.cuda()\n";
  std::ofstream(dir / "pkg" / "bin.py", std::ios::binary) << std::string("\0\1\2", 3);
  std::vector<std::string> notes;
  auto files = collect_python_files({dir.string()}, notes);
  EXPECT_EQ(files.size(), 21u);
  EXPECT_EQ(notes.size(), 2u);
  ScanOptions o;
  o.threads = 4;
  auto results = scan_files(files, o);
  ASSERT_EQ(results.size(), files.size());
  size_t scanned = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(results[i].path, files[i]);
    if (results[i].status == FileStatus::Scanned) {
      ++scanned;
      EXPECT_FALSE(results[i].findings.empty());
    }
  }
  EXPECT_EQ(scanned, 20u);
  EXPECT_THROW(collect_python_files({(dir / "nope").string()}, notes), std::runtime_error);
  fs::remove_all(dir);
}

TEST(Scan, SelectAndIgnoreByIdOrPrefix) {
  REQUIRE_SCAN();
  std::string src = "import torch\nx = y.cuda()\nfor i in r:\n    z.item()\n";
  ScanOptions o;
  o.filter = RuleFilter({"sync"}, {}, source_rule_refs());   // any case, like every command's --select
  FileResult r = scan_source("t.py", src, o);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].rule, "SYNC101");
  o.filter = RuleFilter({}, {"cuda006,SYNC101"}, source_rule_refs());
  r = scan_source("t.py", src, o);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].rule, "CUDA002");
  EXPECT_THROW(RuleFilter({"NOPE1"}, {}, source_rule_refs()), std::invalid_argument);
  EXPECT_THROW(RuleFilter({}, {"nope"}, source_rule_refs()), std::invalid_argument);
}

TEST(Scan, UnifiedDiffHunks) {
  std::string a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n";
  std::string b = "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\nnew\n14\n15\n";
  std::string d = unified_diff("x.py", a, b);
  EXPECT_EQ(d,
            "--- a/x.py\n+++ b/x.py\n"
            "@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n"
            "@@ -11,5 +11,6 @@\n 11\n 12\n 13\n+new\n 14\n 15\n");
  EXPECT_EQ(unified_diff("x.py", a, a), "");
  EXPECT_EQ(unified_diff("x.py", "a", "a\nb\n"),
            "--- a/x.py\n+++ b/x.py\n@@ -1,1 +1,2 @@\n-a\n\\ No newline at end of file\n+a\n+b\n");
}

// The tree-sitter runtime corrupts its heap recovering from a syntax error ~65,536 parser
// states deep (found by fuzz_scan_depth; the likely F-10 SIGSEGV): such a piece is parsed in a
// child process first and reported as PARSE001 when the child dies. Variants: a chained
// assignment ending in a syntax error, unclosed brackets, deep f-strings under an assignment
// chain. The file after it (another piece) is still scanned when the file is cut in pieces.
// scan --diff reports what remains at the lines of the unchanged file (issue 30): each line of
// the fixed text maps to the line it came from, by the alignment the diff shows.
TEST(Scan, LineOriginsFollowTheDiff) {
  std::string a = "import torch\nx = 1\ny = 2\nz = 3\n";
  std::string b = "import torch\nimport torch_npu\nx = 1\ny = 22\nz = 3\n";
  auto o = line_origins(a, b);
  ASSERT_EQ(o.size(), 5u);
  EXPECT_TRUE(o[0].same);
  EXPECT_EQ(o[0].old_line, 0u);
  EXPECT_FALSE(o[1].same);   // inserted before old line 1
  EXPECT_EQ(o[1].old_line, 1u);
  EXPECT_TRUE(o[2].same);
  EXPECT_EQ(o[2].old_line, 1u);
  EXPECT_FALSE(o[3].same);   // changed in place
  EXPECT_EQ(o[3].old_line, 2u);
  EXPECT_TRUE(o[4].same);
  EXPECT_EQ(o[4].old_line, 3u);
  EXPECT_EQ(line_origins(a, a).size(), 4u);
}

TEST(Scan, ParserCrashIsAFindingNotACrash) {
  REQUIRE_SCAN();
  auto repeat = [](std::string_view s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  std::string chain;
  for (int i = 0; i < 70000; ++i) chain += fmt::format("w{} = ", i);
  const std::map<std::string, std::string> crashing = {
      {"chained assignment, then an error", chain + "a + + \n"},
      {"unclosed brackets, then an error", "y = " + repeat("[(", 40000) + "b + + c\n"},
      {"deep f-strings under a chain", chain.substr(0, chain.size() / 2) + repeat("f'{", 300) + "z" + repeat("}'", 300) + "\n"},
  };
  for (const auto& [what, statement] : crashing) {
    std::string src = "import torch\n" + statement + "\ndef f():\n    return torch.device('cuda')\n";
    ScanOptions small_pieces;
    small_pieces.piece_bytes = 4096;  // the def after the statement is a piece of its own
    FileResult r = scan_source("crash.py", src, small_pieces);
    ASSERT_EQ(r.status, FileStatus::Scanned) << what;
    EXPECT_TRUE(r.syntax_error) << what;
    std::set<std::string> rules;
    for (const auto& f : r.findings) {
      rules.insert(f.rule);
      // Debian's tree-sitter 0.20 runtime crashes on these (the check build links it); the 0.23
      // runtime the release builds link (cmake/BundledDeps.cmake) parses them into a syntax
      // error. Either way a PARSE001 that says what happened, and the scan goes on.
      if (f.rule == "PARSE001") {
        EXPECT_TRUE(f.message.find("the parser crashed on the code from here") != std::string::npos ||
                    f.message.find("syntax error") != std::string::npos)
            << what << ": " << f.message;
      }
    }
    EXPECT_TRUE(rules.contains("PARSE001")) << what;
    // Unclosed brackets join the rest of the file into the same statement (and piece).
    if (!what.starts_with("unclosed")) {
      EXPECT_TRUE(rules.contains("CUDA001")) << what << ": the next piece is scanned";
    }
  }
}

// `patch -p1` strips one name and refuses absolute names and '..': headers are relative to
// the cwd under it, and relative to / outside it (`patch -d / -p1`).
TEST(Scan, DiffHeaderPathsApplyWithPatchP1) {
  EXPECT_EQ(diff_header_path("/home/u/proj/src/m.py", "/home/u/proj"), "src/m.py");
  EXPECT_EQ(diff_header_path("/home/u/proj/./src/../m.py", "/home/u/proj/"), "m.py");
  EXPECT_EQ(diff_header_path("src/m.py", "/home/u/proj"), "src/m.py");
  EXPECT_EQ(diff_header_path("/srv/other/m.py", "/home/u/proj"), "srv/other/m.py");
  EXPECT_EQ(diff_header_path("../other/m.py", "/home/u/proj"), "home/u/other/m.py");
  EXPECT_EQ(diff_header_path("//srv/m.py", "/"), "srv/m.py");
}

TEST(Scan, ApiMapMatchesKnowledgeNames) {
  const ApiMap& m = ApiMap::builtin();
  EXPECT_GT(m.size(), 30u);
  ASSERT_NE(m.find("torch.isin"), nullptr);
  EXPECT_FALSE(m.find("torch.isin")->host_note.empty());
  EXPECT_EQ(m.find("torch.add"), nullptr);
  EXPECT_THROW(ApiMap::parse("torch.x\tonly-two\n"), std::runtime_error);
}

TEST(Scan, SarifHasCodeScanningStructure) {
  REQUIRE_SCAN();
  FileResult r = scan_source("src/my train.py", "import torch\nx = y.cuda()\n", {});
  SarifLog log;
  log.tool_version = "0.1.0";
  log.paths = {"/w", "/w"};
  for (const auto& ri : source_rules()) log.rules.push_back({std::string(ri.id), std::string(ri.summary), "", ri.severity});
  for (const auto& f : r.findings) {
    SarifResult s;
    s.rule_id = f.rule;
    s.severity = f.severity;
    s.message = f.message;
    s.uri = r.path;
    s.line = f.location.line;
    s.column = f.location.column;
    for (const auto& e : f.edits) s.replacements.push_back({e.start, e.end - e.start, e.replacement});
    log.results.push_back(s);
  }
  std::ostringstream os;
  render_sarif(os, log);
  simdjson::dom::parser parser;
  simdjson::padded_string json(os.str());
  simdjson::dom::element doc = parser.parse(json);
  EXPECT_EQ(std::string_view(doc["version"]), "2.1.0");
  auto run = doc["runs"].at(0);
  EXPECT_EQ(std::string_view(run["tool"]["driver"]["name"]), "npu-doctor");
  std::set<std::string> rule_ids;
  for (auto rule : run["tool"]["driver"]["rules"].get_array()) {
    rule_ids.insert(std::string(std::string_view(rule["id"])));
    EXPECT_FALSE(std::string_view(rule["shortDescription"]["text"]).empty());
  }
  size_t n = 0;
  for (auto res : run["results"].get_array()) {
    ++n;
    EXPECT_TRUE(rule_ids.count(std::string(std::string_view(res["ruleId"]))));
    std::string_view level = res["level"];
    EXPECT_TRUE(level == "error" || level == "warning" || level == "note");
    EXPECT_FALSE(std::string_view(res["message"]["text"]).empty());
    auto pl = res["locations"].at(0)["physicalLocation"];
    EXPECT_EQ(std::string_view(pl["artifactLocation"]["uri"]), "src/my%20train.py");
    EXPECT_GE(int64_t(pl["region"]["startLine"]), 1);
    EXPECT_GE(int64_t(pl["region"]["startColumn"]), 1);
  }
  EXPECT_EQ(n, r.findings.size());
}

// A finding whose fix is withheld says which CUDA-only call its test guards and which line
// runs on the NPU instead; a config-driven gated MLP says when it is SwiGLU.
TEST(Scan, NotesSayWhyAndWhatRunsInstead) {
  REQUIRE_SCAN();
  std::string gate =
      "import torch\n"
      "def norm(x, w):\n"
      "    if x.is_cuda:\n"
      "        return fused_rms_norm_cuda.forward(x, w)\n"
      "    return torch.nn.functional.rms_norm(x, x.shape[-1:], w)\n";
  FileResult r = scan_source("t.py", gate, {});
  ASSERT_EQ(r.findings.size(), 1u);  // no CUDA006: the only fix is withheld
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.rule, "CUDA007");
  EXPECT_FALSE(f.fixable());
  EXPECT_NE(f.message.find("`fused_rms_norm_cuda.forward` (line 4)"), std::string::npos) << f.message;
  EXPECT_NE(f.fix.find("the other branch (line 5) runs"), std::string::npos) << f.fix;
  EXPECT_NE(f.fix.find("torch_npu.npu_rms_norm"), std::string::npos) << f.fix;

  std::string mlp =
      "class MLP:\n"
      "    def __init__(self, config):\n"
      "        self.act_fn = ACT2FN[config.hidden_act]\n"
      "        self.act = nn.SiLU()\n"
      "    def forward(self, x):\n"
      "        a = self.act_fn(self.gate_proj(x)) * self.up_proj(x)\n"
      "        b = self.act(self.gate_proj(x)) * self.up_proj(x)\n"
      "        return a, b\n";
  r = scan_source("t.py", "import torch\nfrom torch import nn\n" + mlp, {});
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_NE(r.findings[0].message.find("`ACT2FN[config.hidden_act]`: when the config names \"silu\""), std::string::npos)
      << r.findings[0].message;
  EXPECT_NE(r.findings[1].message.find("hand-written SwiGLU"), std::string::npos) << r.findings[1].message;
}

// The rules that follow values through expressions recurse along them: machine-made chains
// 50,000 long (views, products, subscripts, conditionals) are scanned, not a stack overflow.
TEST(Scan, DeepChainsDoNotExhaustTheStack) {
  REQUIRE_SCAN();
  auto repeat = [](std::string_view s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  const int n = 50000;
  std::string src = "import torch\n"
                    "y = x" + repeat(".t()", n) + "\nz = y @ w\n"
                    "p = x" + repeat(" * x", n) + "\nq = x / (x" + repeat(" * x", n) + ")\n"
                    "k = a" + repeat("[:]", n) + "\nv = x.view(k).transpose(2, 3) @ w\n"
                    "if x.is_cuda" + repeat(" and x.is_cuda", n / 10) + ":\n    f_cuda(x)\n"
                    "g = " + repeat("a_cuda if c else (", 2000) + "b" + repeat(")", 2000) + "\n";
  FileResult r = scan_source("deep.py", src, {});
  EXPECT_EQ(r.status, FileStatus::Scanned);
  // Deeper than FileScan's nesting bound: one PARSE001 for the file (the walk stops there).
  EXPECT_TRUE(r.syntax_error);
}

// Any expression nested past the walk's bound (operator chains, brackets, calls, subscripts,
// unary chains, chained assignments) gives one PARSE001 at that expression; the statements
// after it are still checked. The chains are 3x the bound, so a walk that recursed per level
// or climbed per node would show up here as a crash or a hang.
TEST(Scan, TooDeepExpressionIsOneFindingAndTheRestIsScanned) {
  REQUIRE_SCAN();
  auto repeat = [](std::string_view s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  const int n = 3000;
  std::string names;
  for (int i = 0; i < n; ++i) names += fmt::format("t{} = ", i);
  const std::map<std::string, std::string> deep = {
      {"product", "w" + repeat(" * w", n)},
      {"or chain", "w" + repeat(" or w", n)},
      {"parentheses", repeat("(", n) + "w" + repeat(")", n)},
      {"calls", repeat("g(", n) + "w" + repeat(")", n)},
      {"subscripts", repeat("w[", n) + "0" + repeat("]", n)},
      {"lists", repeat("[", n) + repeat("]", n)},
      {"unary minus", repeat("- ", n) + "w"},
      {"not chain", repeat("not ", n) + "w"},
      {"attribute chain", "torch" + repeat(".cuda", n)},
      {"string concatenation", "torch.device(" + std::string("'npu'") + repeat(" + 'cuda'", n) + ")"},
  };
  for (const auto& [what, expr] : deep) {
    for (bool chained : {false, true}) {
      std::string src = "import torch\n" + (chained ? names : std::string("v = ")) + expr +
                        "\ndevice = torch.device('cuda')\n";
      FileResult r = scan_source("deep.py", src, {});
      ASSERT_EQ(r.status, FileStatus::Scanned) << what;
      std::map<std::string, int> by_rule;
      for (const auto& f : r.findings) ++by_rule[f.rule + (f.rule == "CUDA001" ? ":" + std::to_string(f.location.line) : "")];
      EXPECT_EQ(by_rule["PARSE001"], 1) << what << (chained ? " (chained assignment)" : "");
      EXPECT_EQ(by_rule["CUDA001:3"], 1) << what << ": the line after the deep one is scanned";
      for (const auto& f : r.findings)
        if (f.rule == "PARSE001") {
          EXPECT_EQ(f.location.line, 2) << what;
          EXPECT_NE(f.message.find("nested more than 1000 levels deep"), std::string::npos) << f.message;
        }
    }
  }
}

TEST(Scan, EveryRuleHasADoc) {
  for (const auto& r : source_rules()) {
    std::string_view doc = find_embedded(embedded_rule_docs(), std::string(r.id) + ".md");
    EXPECT_FALSE(doc.empty()) << r.id;
    EXPECT_NE(doc.find("## Why it hurts on an Ascend NPU"), std::string_view::npos) << r.id;
    EXPECT_EQ(doc.find("NpuLayerNorm"), std::string_view::npos) << r.id;
  }
}
