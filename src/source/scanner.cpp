#include "knowledge/advice_texts.hpp"
#include "util/regular_file.hpp"
#include "source/scanner.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "source/suppressions.hpp"
#include "source/api_map.hpp"
#include "source/rule_context.hpp"
#include "source/source_encoding.hpp"
#include "source/statement_chunks.hpp"

namespace npud {

namespace fs = std::filesystem;

size_t first_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
    else return i;
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

namespace {

bool skipped_dir_name(const std::string& name) {
  return name == ".git" || name == "__pycache__" || name == "node_modules" || name == "site-packages" ||
         name == "venv" || name == ".venv" || name == ".hg" || name == ".tox" || name == ".mypy_cache";
}
bool noted_dir_name(const std::string& name) {
  return name == "node_modules" || name == "site-packages" || name == "venv" || name == ".venv" || name == ".tox";
}

}  // namespace

std::vector<std::string> collect_python_files(const std::vector<std::string>& paths, std::vector<std::string>& notes) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) throw std::runtime_error(p + ": no such file or directory");
    if (!fs::is_directory(st)) {
      out.push_back(p);
      continue;
    }
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
    if (ec) throw std::runtime_error(p + ": " + ec.message());
    for (; it != end; it.increment(ec)) {
      if (ec) {
        notes.push_back(p + ": " + ec.message());
        break;
      }
      const fs::directory_entry& e = *it;
      std::string name = e.path().filename().string();
      std::error_code ec2;
      if (e.is_directory(ec2) && !e.is_symlink(ec2)) {
        bool venv = fs::exists(e.path() / "pyvenv.cfg", ec2);
        if (skipped_dir_name(name) || venv) {
          if (noted_dir_name(name) || venv)
            notes.push_back("skipped " + e.path().string() + "/ (" + (venv ? "virtualenv" : "third-party packages") + ")");
          it.disable_recursion_pending();
        }
        continue;
      }
      if (e.path().extension() == ".py" && e.is_regular_file(ec2)) out.push_back(e.path().string());
    }
  }
  for (auto& s : out)
    if (s.starts_with("./")) s.erase(0, 2);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

#ifdef NPUD_HAVE_TREE_SITTER

bool scan_available() { return true; }

namespace {

using py::Kind;

// Inside `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`): imports there never run.
// Called before n is pushed on fs.ancestors, which holds its enclosing nodes.
bool under_type_checking(const FileScan& fs) {
  const auto& f = py::fields();
  for (TSNode p : fs.ancestors) {
    if (std::string_view(ts_node_type(p)) != "if_statement") continue;
    if (fs.text_of(py::field(p, f.condition)).ends_with("TYPE_CHECKING")) return true;
  }
  return false;
}

// Import statements: aliases ("F" -> "torch.nn.functional"), `import torch`, `import torch_npu`.
void track_import(TSNode n, Kind k, FileScan& fs) {
  const auto& f = py::fields();
  if (k == Kind::ImportStatement) {
    uint32_t cnt = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < cnt; ++i) {
      TSNode c = ts_node_named_child(n, i);
      std::string_view full, alias;
      if (py::kind(c) == Kind::AliasedImport) {
        full = fs.text_of(py::field(c, f.name));
        alias = fs.text_of(py::field(c, f.alias));
      } else if (py::kind(c) == Kind::DottedName) {
        full = fs.text_of(c);
      } else {
        continue;
      }
      if (full == "torch_npu" || full.starts_with("torch_npu.")) fs.imports_torch_npu = true;
      if (full == "torch" && !under_type_checking(fs)) {
        // The fix for CUDA006 goes after the first module-level `import torch` (else the first).
        bool top = !fs.ancestors.empty() && py::kind(fs.ancestors.back()) == Kind::Module;
        if (!fs.has_import_torch || (top && !fs.import_torch_top)) {
          fs.import_torch = NodeSpan::of(n);
          fs.has_import_torch = true;
          fs.import_torch_top = top;
        }
      }
      if (!alias.empty()) fs.aliases[std::string(alias)] = std::string(full);
    }
    return;
  }
  // from M import a as b, c
  TSNode mod = py::field(n, f.module_name);
  if (ts_node_is_null(mod)) return;
  std::string_view m = fs.text_of(mod);
  if (m == "torch_npu" || m.starts_with("torch_npu.")) fs.imports_torch_npu = true;
  if (py::kind(mod) != Kind::DottedName) return;  // relative imports: not torch
  uint32_t cnt = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < cnt; ++i) {
    TSNode c = ts_node_named_child(n, i);
    if (ts_node_eq(c, mod)) continue;
    std::string_view name, alias;
    if (py::kind(c) == Kind::AliasedImport) {
      name = fs.text_of(py::field(c, f.name));
      alias = fs.text_of(py::field(c, f.alias));
    } else if (py::kind(c) == Kind::DottedName) {
      name = alias = fs.text_of(c);
    } else {
      continue;
    }
    fs.aliases[std::string(alias)] = std::string(m) + "." + std::string(name);
  }
}

TSNode first_error(TSNode root) {
  TSNode n = root;
  while (true) {
    if (ts_node_is_missing(n) || py::kind(n) == Kind::Error) return n;
    uint32_t cnt = ts_node_child_count(n);
    bool descended = false;
    for (uint32_t i = 0; i < cnt; ++i) {
      TSNode c = ts_node_child(n, i);
      if (ts_node_has_error(c) || ts_node_is_missing(c)) {
        n = c;
        descended = true;
        break;
      }
    }
    if (!descended) return n;
  }
}

// Visits the piece's tree in source order (iteratively: a chain of 100,000 operators is as
// deep). Returns the first node it did not descend into because it lies FileScan::kMaxNesting
// levels down (a null node when none did).
// Logical lines at least this long get a trial parse in a child process first: the runtime's
// crash needs about 65,536 nested parser states, at least a byte each.
constexpr uint32_t kLongLogicalLine = 32 * 1024;

TSNode walk(FileScan& fs, std::vector<std::unique_ptr<SourceRule>>& rules,
            FileSuppressions& ignores) {
  const auto& f = py::fields();
  TSTreeCursor c = ts_tree_cursor_new(fs.root);
  struct Frame {
    Kind kind;
    bool loop_body = false;
    bool function = false;
    int saved_loop = 0;
    int saved_scope = 0;
  };
  std::vector<Frame> stack;

  auto enter = [&](TSNode n) {
    Kind k = py::kind(n);
    Frame fr{k};
    if (k == Kind::Block && !stack.empty() &&
        (stack.back().kind == Kind::ForStatement || stack.back().kind == Kind::WhileStatement) &&
        ts_tree_cursor_current_field_id(&c) == f.body) {
      fr.loop_body = true;
      ++fs.loop_depth;
    } else if (k == Kind::Comprehension) {
      fr.loop_body = true;
      ++fs.loop_depth;
    } else if (k == Kind::FunctionDefinition) {
      fr.function = true;
      fr.saved_loop = fs.loop_depth;
      fr.saved_scope = fs.scope_id;
      fs.loop_depth = 0;
      fs.scope_id = ++fs.scopes_seen;
      fs.functions.push_back(fs.text_of(py::field(n, f.name)));
    } else if (k == Kind::Comment) {
      // Only real comments reach here (the parser tells them from strings): source/suppressions.hpp.
      for (SuppressionComment& s : parse_suppressions(fs.text_of(n))) {
        if (s.file_level) ignores.whole_file.push_back(std::move(s));
        else ignores.by_line[int(ts_node_start_point(n).row) + 1].push_back(std::move(s));
      }
    } else if (k == Kind::ImportStatement || k == Kind::ImportFromStatement) {
      track_import(n, k, fs);
    }
    stack.push_back(fr);
    fs.ancestors.push_back(n);
    if (k == Kind::Call) fs.call_dotted = fs.dotted(py::field(n, f.function));
    for (auto& r : rules) r->visit(n, k, fs);
  };
  auto leave = [&]() {
    const Frame& fr = stack.back();
    if (fr.kind == Kind::Assignment)
      for (auto& r : rules) r->leave(fs.ancestors.back(), fr.kind, fs);
    if (fr.loop_body) --fs.loop_depth;
    if (fr.function) {
      fs.loop_depth = fr.saved_loop;
      fs.scope_id = fr.saved_scope;
      fs.functions.pop_back();
    }
    stack.pop_back();
    fs.ancestors.pop_back();
  };

  TSNode too_deep{};
  enter(ts_tree_cursor_current_node(&c));
  while (true) {
    bool descend = stack.size() < FileScan::kMaxNesting;
    if (!descend && ts_node_is_null(too_deep) && ts_node_child_count(ts_tree_cursor_current_node(&c)) > 0)
      too_deep = ts_tree_cursor_current_node(&c);
    if (descend && ts_tree_cursor_goto_first_child(&c)) {
      enter(ts_tree_cursor_current_node(&c));
      continue;
    }
    bool done = false;
    while (true) {
      leave();
      if (ts_tree_cursor_goto_next_sibling(&c)) {
        enter(ts_tree_cursor_current_node(&c));
        break;
      }
      if (!ts_tree_cursor_goto_parent(&c)) {
        done = true;
        break;
      }
    }
    if (done) break;
  }
  ts_tree_cursor_delete(&c);
  return too_deep;
}

// Drops what --select/--ignore leave out, and what a comment suppresses (counted).
void keep_wanted(std::vector<Finding>& findings, const RuleFilter& filter, const FileSuppressions& ignores,
                 size_t& suppressed) {
  std::erase_if(findings, [&](const Finding& f) {
    if (!filter.enabled(f.rule)) return true;
    if (!ignores.suppressed(f.rule, f.location.line)) return false;
    ++suppressed;
    return true;
  });
}

// Drops what a comment suppresses (counted): a finding the user silenced on its line is no fix
// the file will get, which what the rules decide at finish() reads (CUDA006's "or will, after
// the CUDA fixes").
void drop_suppressed(std::vector<Finding>& findings, const FileSuppressions& ignores, size_t& suppressed) {
  keep_wanted(findings, RuleFilter(), ignores, suppressed);
}

}  // namespace

FileResult scan_source(std::string path, std::string text, const ScanOptions& opts) {
  FileResult r;
  r.path = std::move(path);
  r.bytes = text.size();
  r.lines = size_t(std::count(text.begin(), text.end(), '\n')) + (!text.empty() && text.back() != '\n');
  if (text.size() > kMaxSourceBytes) {
    r.status = FileStatus::TooLarge;
    r.note = "larger than 256 MiB";
    return r;
  }
  if (size_t nul = text.find('\0'); nul != std::string::npos) {
    r.status = FileStatus::Binary;
    r.note = "binary (NUL byte at offset " + std::to_string(nul) + ")";
    return r;
  }
  if (size_t bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    r.status = FileStatus::NotUtf8;
    r.note = "not UTF-8 (invalid byte at offset " + std::to_string(bad) + ")";
    return r;
  }
  const KnowledgeVersion& kv = opts.version ? *opts.version : Knowledge::builtin().newest();
  // Python ends a line at CR alone too (old Mac files); the grammar only knows LF and CRLF. A
  // CR -> LF copy of the same length keeps every offset, so fixes apply to the original.
  std::string lf_text;
  std::string_view newline = "\n";
  if (size_t cr = text.find('\r'); cr != std::string::npos) {
    newline = cr + 1 < text.size() && text[cr + 1] == '\n' ? "\r\n" : "\r";
    for (size_t i = cr; i < text.size(); i = text.find('\r', i + 1)) {
      if (i + 1 < text.size() && text[i + 1] == '\n') continue;
      if (lf_text.empty()) lf_text = text;
      lf_text[i] = '\n';
      if (i + 1 >= text.size()) break;
    }
  }
  std::string_view parsed = lf_text.empty() ? std::string_view(text) : std::string_view(lf_text);
  if (!lf_text.empty()) r.lines = size_t(std::count(parsed.begin(), parsed.end(), '\n')) + (parsed.back() != '\n');
  FileScan fs(parsed, kv, ApiMap::builtin());
  fs.newline = newline;
  auto rules = make_source_rule_instances(opts.filter, parsed);
  // No selected rule can fire here (`--select CUDA007` on a file that never says cuda or npu) and
  // syntax errors are not asked for: nothing to parse (issue 44).
  if (rules.empty() && !opts.filter.enabled("PARSE001")) {
    if (opts.keep_text) r.text = std::move(text);
    return r;
  }
  FileSuppressions ignores;
  // One syntax tree at a time: a piece of whole top-level statements (one piece up to 1 MiB).
  std::optional<Finding> parse_error;
  for (const StatementChunk& piece : statement_chunks(parsed, opts.piece_bytes)) {
    TSRange range{{piece.start_row, 0}, {UINT32_MAX, UINT32_MAX}, piece.start_byte, piece.end_byte};
    const TSRange* part = piece.start_byte == 0 && piece.end_byte == parsed.size() ? nullptr : &range;
    // A logical line this long may nest past what the tree-sitter runtime survives (see
    // py::parse_survives); ordinary code never has one, so the extra parse is rare.
    if (piece.longest_logical_line >= kLongLogicalLine && !py::parse_survives(parsed, part)) {
      if (!parse_error) {
        NodeSpan at{{piece.start_row, 0}, {piece.start_row, 0}, piece.start_byte, piece.start_byte};
        size_t mark = fs.findings.size();
        fs.report("PARSE001", Severity::Error, at,
                  "the parser crashed on the code from here (a statement of " +
                      std::to_string(piece.longest_logical_line) +
                      " bytes nests too deep for tree-sitter to recover from a syntax error in it): not checked",
                  advice("PARSE001", "fix_crashed"));
        parse_error = std::move(fs.take_since(mark).front());
      }
      continue;
    }
    py::TreePtr tree = py::parse(parsed, part);
    fs.root = ts_tree_root_node(tree.get());
    fs.forget_assignment();
    if (piece.start_byte == 0) {
      TSNode first = ts_node_named_child(fs.root, 0);
      fs.first_statement = NodeSpan::of(ts_node_is_null(first) ? fs.root : first);
    }
    TSNode too_deep = walk(fs, rules, ignores);
    if (!parse_error && !ts_node_is_null(too_deep)) {
      size_t mark = fs.findings.size();
      fs.report("PARSE001", Severity::Error, too_deep,
                "nested more than " + std::to_string(FileScan::kMaxNesting) +
                    " levels deep: the code inside this expression is not checked (CPython's compiler also "
                    "refuses most code this deep)",
                advice("PARSE001", "fix_too_deep"));
      parse_error = std::move(fs.take_since(mark).front());
    }
    if (!parse_error && ts_node_has_error(fs.root)) {
      TSNode err = first_error(fs.root);
      size_t mark = fs.findings.size();
      fs.report("PARSE001", Severity::Error, err,
                ts_node_is_missing(err) ? "syntax error: missing `" + std::string(ts_node_type(err)) + "`"
                                        : "syntax error: the parser could not read this",
                advice("PARSE001", "fix_syntax"));
      parse_error = std::move(fs.take_since(mark).front());
    }
    fs.root = TSNode{};
  }
  // --select/--ignore choose what is shown, not what the rules see: they apply after finish()
  // (with `--select CUDA006`, the file still gets the CUDA fixes CUDA006 counts on; a rule file
  // may drop or add findings there: CUDA gates, CUDA006).
  drop_suppressed(fs.findings, ignores, r.suppressed);
  for (auto& rule : rules) rule->finish(fs);
  keep_wanted(fs.findings, opts.filter, ignores, r.suppressed);
  if (parse_error) {
    r.syntax_error = true;
    for (auto& f : fs.findings) f.edits.clear();  // never rewrite a file we did not fully understand
    std::vector<Finding> parse{std::move(*parse_error)};
    size_t never = 0;   // a syntax error is always said
    keep_wanted(parse, opts.filter, {}, never);
    for (auto& p : parse) fs.findings.push_back(std::move(p));
  }
  std::stable_sort(fs.findings.begin(), fs.findings.end(), [](const Finding& a, const Finding& b) {
    if (a.location.line != b.location.line) return a.location.line < b.location.line;
    if (a.location.column != b.location.column) return a.location.column < b.location.column;
    return a.rule < b.rule;
  });
  r.findings = std::move(fs.findings);
  if (opts.keep_text) r.text = std::move(text);
  return r;
}

#else  // no tree-sitter in this build

bool scan_available() { return false; }

FileResult scan_source(std::string path, std::string text, const ScanOptions&) {
  FileResult r;
  r.path = std::move(path);
  r.bytes = text.size();
  r.status = FileStatus::ReadError;
  r.note = "npu-doctor was built without the tree-sitter Python grammar";
  return r;
}

#endif

std::vector<FileResult> scan_files(const std::vector<std::string>& files, const ScanOptions& opts) {
  std::vector<FileResult> results(files.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      std::string text, error;
      // A FIFO or device named as a source is refused, never waited on.
      if (!read_regular_file(files[i], uint64_t(1) << 40, text, error)) {
        results[i].path = files[i];
        results[i].status = FileStatus::ReadError;
        results[i].note = error;
        continue;
      }
      SourceEncoding enc = decode_python_source(text);
      if (!enc.error.empty()) {
        results[i].path = files[i];
        results[i].bytes = text.size();
        results[i].status = FileStatus::NotUtf8;
        results[i].note = enc.error;
        continue;
      }
      try {
        results[i] = scan_source(files[i], std::move(text), opts);
        results[i].encoding = enc.name;
      } catch (const std::exception& e) {
        results[i] = FileResult{};
        results[i].path = files[i];
        results[i].status = FileStatus::ReadError;
        results[i].note = e.what();
      }
    }
  };
  unsigned n = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
  n = unsigned(std::min<size_t>(n, std::max<size_t>(files.size(), 1)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return results;
}

}  // namespace npud
