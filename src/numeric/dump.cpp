#include "util/regular_file.hpp"
#include "numeric/dump.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <unordered_set>
#include <unistd.h>

#include <fmt/format.h>
#include <simdjson.h>

#include "util/input_error.hpp"
#include "ingest/json_error_at.hpp"
#include "numeric/npy.hpp"
#include "numeric/pt.hpp"
#include "numeric/tensor_file.hpp"
#include "util/text.hpp"

namespace npud {

namespace fs = std::filesystem;
namespace dom = simdjson::dom;

std::string_view layout_name(DumpLayout l) {
  switch (l) {
    case DumpLayout::Ours: return "npu-doctor";
    case DumpLayout::NpyTree: return "npy-tree";
    case DumpLayout::PtTree: return "pt-tree";
    case DumpLayout::Msprobe: return "msprobe";
  }
  return "?";
}

void check_relative_path(const std::string& rel, const std::string& name, uint64_t offset) {
  if (rel.empty()) throw InputError(name, offset, "empty tensor file path");
  if (rel.find('\0') != std::string::npos) throw InputError(name, offset, "tensor file path contains a NUL byte");
  if (rel[0] == '/' || rel[0] == '\\')
    throw InputError(name, offset, fmt::format("tensor file '{}' is an absolute path; dump indexes may only name "
                                               "files inside the dump directory", rel));
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find_first_of("/\\", start);
    if (end == std::string::npos) end = rel.size();
    if (rel.compare(start, end - start, "..") == 0 && end - start == 2)
      throw InputError(name, offset, fmt::format("tensor file '{}' leaves the dump directory ('..')", rel));
    start = end + 1;
  }
}

namespace {

// "torch.bfloat16" / "BFloat16" / "float16" -> "bfloat16" / "float16".
std::string normalise_dtype(std::string_view d) {
  if (d.substr(0, 6) == "torch.") d.remove_prefix(6);
  std::string out;
  for (char c : d) out += char(std::tolower(static_cast<unsigned char>(c)));
  if (out == "half") return "float16";
  if (out == "float") return "float32";
  if (out == "double") return "float64";
  return out;
}

std::string_view kind_of_msprobe_entry(std::string_view entry) {
  return entry.substr(0, 7) == "Module." || entry.substr(0, 5) == "Cell." ? "module" : "op";
}

// Index files (index.jsonl, dump.json, stack.json) are read whole: regular files of at most
// kMaxDumpIndexBytes only (a link to /dev/zero must not grow until memory runs out).
constexpr uint64_t kMaxDumpIndexBytes = uint64_t(1) << 30;

std::string read_file(const std::string& path) {
  std::string s, error;
  if (!read_regular_file(path, kMaxDumpIndexBytes, s, error)) throw InputError(path, 0, error, false);
  return s;
}

// Takes the lookup result itself: converting a missing field to an element would throw.
bool get_shape(simdjson::simdjson_result<dom::element> field, std::vector<int64_t>& out) {
  dom::array a;
  if (field.get_array().get(a)) return false;
  out.clear();
  for (dom::element d : a) {
    int64_t v;
    if (d.get_int64().get(v) || v < 0) return false;
    out.push_back(v);
  }
  return true;
}

std::optional<double> stat_value(dom::element e) {
  double d;
  bool b;
  std::string_view s;
  if (e.get_double().get(d) == simdjson::SUCCESS) return d;
  if (e.get_bool().get(b) == simdjson::SUCCESS) return b ? 1.0 : 0.0;
  if (e.get_string().get(s) == simdjson::SUCCESS) {
    std::string l = normalise_dtype(s);
    if (l == "nan") return std::nan("");
    if (l == "inf" || l == "+inf" || l == "infinity") return INFINITY;
    if (l == "-inf" || l == "-infinity") return -INFINITY;
    char* end = nullptr;
    std::string copy(s);
    double v = std::strtod(copy.c_str(), &end);
    if (!copy.empty() && end == copy.c_str() + copy.size()) return v;
  }
  return std::nullopt;  // null, or something that is not a statistic
}

}  // namespace

// --- npu-doctor's index.jsonl ------------------------------------------------------------

std::string dump_not_started_message(std::string_view reason) {
  const bool numpy = reason.find("numpy") != std::string_view::npos;
  return fmt::format("the tensor dump did not start in the program ({}), so no tensor was dumped{}", reason,
                     numpy ? ": the dump writes .npy files with numpy; install numpy in the Python that runs the "
                             "program and run it again"
                           : "");
}

void parse_index_jsonl(std::string_view text, const std::string& name, Dump& out) {
  out.layout = DumpLayout::Ours;
  out.task = "tensor";
  dom::parser parser;
  size_t pos = 0;
  bool header = false;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    bool complete = nl != std::string_view::npos;
    size_t end = complete ? nl : text.size();
    std::string_view line = text.substr(pos, end - pos);
    uint64_t at = pos;
    pos = complete ? nl + 1 : text.size();
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    dom::element doc;
    if (auto err = parser.parse(line.data(), line.size()).get(doc)) {
      if (!complete && header) {  // the program was killed while writing this line
        out.notes.push_back(fmt::format("{}: byte {}: dropped a cut-off last line", name, at));
        break;
      }
      throw InputError(name, at, fmt::format("invalid JSON line ({})", simdjson::error_message(err)));
    }
    dom::object obj;
    if (doc.get_object().get(obj)) throw InputError(name, at, "each line must be a JSON object");
    if (!header) {
      std::string_view format;
      int64_t version = 0;
      if (obj["format"].get_string().get(format) || format != "npu-doctor-dump")
        throw InputError(name, at, "first line is not an npu-doctor dump header ({\"format\":\"npu-doctor-dump\",...})");
      if (obj["version"].get_int64().get(version) || version != 1)
        throw InputError(name, at, "unsupported npu-doctor dump version (1 is read)");
      std::string_view torch, not_started;
      if (obj["torch"].get_string().get(torch) == simdjson::SUCCESS) out.framework = "torch " + std::string(torch);
      // The shim could not dump (npu_doctor/_dump.py _write_not_started): say why, not "no dump".
      if (obj["not_started"].get_string().get(not_started) == simdjson::SUCCESS)
        throw InputError(name, at, dump_not_started_message(not_started));
      header = true;
      continue;
    }
    std::string_view stopped;
    if (obj["stopped"].get_string().get(stopped) == simdjson::SUCCESS) {   // Dumper.fail()
      out.notes.push_back(fmt::format("{}: byte {}: the dump stopped early in the program ({}): the tensors after "
                                      "this point were not dumped", name, at, stopped));
      continue;
    }
    DumpEntry e;
    e.offset = at;
    std::string_view s;
    if (obj["key"].get_string().get(s) || s.empty()) throw InputError(name, at, "entry lacks a \"key\" string");
    e.key = std::string(s);
    if (obj["file"].get_string().get(s)) throw InputError(name, at, "entry lacks a \"file\" string");
    e.file = std::string(s);
    check_relative_path(e.file, name, at);
    if (!get_shape(obj["shape"], e.shape)) throw InputError(name, at, "entry lacks a \"shape\" list of integers");
    if (obj["kind"].get_string().get(s) == simdjson::SUCCESS) e.kind = std::string(s);
    if (e.kind != "module" && e.kind != "op") e.kind = "op";
    if (obj["name"].get_string().get(s) == simdjson::SUCCESS) e.name = std::string(s);
    if (obj["io"].get_string().get(s) == simdjson::SUCCESS) e.io = std::string(s);
    if (obj["dtype"].get_string().get(s) == simdjson::SUCCESS) e.dtype = normalise_dtype(s);
    int64_t arg = 0;
    if (obj["arg"].get_int64().get(arg) == simdjson::SUCCESS) e.arg = std::to_string(arg);
    e.group = e.kind + "/" + e.io;
    dom::array stack;
    if (obj["stack"].get_array().get(stack) == simdjson::SUCCESS) {
      for (dom::element fr : stack) {
        dom::array f;
        if (fr.get_array().get(f) || f.size() < 2) continue;
        DumpFrame frame;
        std::string_view file, fn;
        int64_t line_no = 0;
        if (f.at(0).get_string().get(file) || f.at(1).get_int64().get(line_no)) continue;
        frame.file = std::string(file);
        frame.line = line_no;
        if (f.size() > 2 && f.at(2).get_string().get(fn) == simdjson::SUCCESS) frame.function = std::string(fn);
        e.stack.push_back(std::move(frame));
      }
    }
    out.entries.push_back(std::move(e));
  }
  if (!header) throw InputError(name, 0, "empty dump index (no header line)");
}

// --- msprobe dump.json ---------------------------------------------------------------------

namespace {

struct MsprobeReader {
  const std::string& name;
  Dump& out;
  const std::string& entry;
  bool tensor_task;
  uint64_t at;  // offset of the entry's key in dump.json (npos: not found)

  [[noreturn]] void fail(const std::string& msg) const {
    throw InputError(name, at == std::string::npos ? 0 : at, msg, at != std::string::npos);
  }

  // One item (or a nested list of items) of an entry's input/output list.
  void item(dom::element el, const std::string& io, const std::string& arg) {
    dom::array list;
    if (el.get_array().get(list) == simdjson::SUCCESS) {
      size_t i = 0;
      for (dom::element sub : list) item(sub, io, arg + "." + std::to_string(i++));
      return;
    }
    dom::object obj;
    if (el.get_object().get(obj)) return;  // None, or something that is not a tensor
    std::string_view type, dtype;
    bool is_tensor = obj["type"].get_string().get(type) == simdjson::SUCCESS &&
                     type.find("Tensor") != std::string_view::npos;
    if (!is_tensor) return;
    DumpEntry e;
    e.key = entry + "." + io + "." + arg;
    e.kind = std::string(kind_of_msprobe_entry(entry));
    e.name = entry;
    e.io = io;
    e.arg = arg;
    bool backward = entry.find(".backward") != std::string::npos;
    e.group = e.kind + "/" + (io == "output" ? "output" : "input") + (backward ? "/backward" : "");
    if (obj["dtype"].get_string().get(dtype) == simdjson::SUCCESS) e.dtype = normalise_dtype(dtype);
    if (!get_shape(obj["shape"], e.shape))
      fail(fmt::format("{}: tensor {} lacks a \"shape\" list", entry, e.key));
    TensorStats st;
    dom::element v;
    if (obj["Max"].get(v) == simdjson::SUCCESS) st.max = stat_value(v);
    if (obj["Min"].get(v) == simdjson::SUCCESS) st.min = stat_value(v);
    if (obj["Mean"].get(v) == simdjson::SUCCESS) st.mean = stat_value(v);
    if (obj["Norm"].get(v) == simdjson::SUCCESS) st.norm = stat_value(v);
    if (st.max || st.min || st.mean || st.norm) e.stats = st;
    std::string_view data_name;
    if (tensor_task && obj["data_name"].get_string().get(data_name) == simdjson::SUCCESS) {
      std::string file = std::string(data_name);
      check_relative_path(file, name, at == std::string::npos ? 0 : at);
      e.file = "dump_tensor_data/" + file;
    }
    out.entries.push_back(std::move(e));
  }
};

}  // namespace

void parse_msprobe_json(std::string_view text, const std::string& name, Dump& out) {
  out.layout = DumpLayout::Msprobe;
  dom::parser parser;
  dom::element doc;
  const size_t bom = utf8_bom_size(text);  // offsets below stay offsets in the file
  std::string_view body = text.substr(bom);
  if (auto err = parser.parse(body.data(), body.size()).get(doc))
    throw InputError(name, bom + json_error_offset(simdjson::padded_string(body)),
                     fmt::format("invalid JSON ({})", simdjson::error_message(err)));
  dom::object top;
  if (doc.get_object().get(top)) throw InputError(name, 0, "not an msprobe dump.json (top level is not an object)");
  std::string_view s;
  if (top["task"].get_string().get(s)) throw InputError(name, 0, "not an msprobe dump.json (no \"task\")", false);
  out.task = std::string(s);
  if (out.task != "statistics" && out.task != "tensor")
    throw InputError(name, 0, fmt::format("msprobe task '{}' is not read (statistics and tensor are)", out.task), false);
  if (top["framework"].get_string().get(s) == simdjson::SUCCESS) out.framework = std::string(s);
  dom::object data;
  if (top["data"].get_object().get(data))
    throw InputError(name, 0, "not an msprobe dump.json (no \"data\" object)", false);
  // Entries come in file order: each key is searched for after the previous one.
  size_t search_from = text.find("\"data\"");
  std::unordered_set<std::string> seen;
  size_t not_objects = 0;
  std::string first_not_object;
  for (auto [entry_key, value] : data) {
    std::string entry(entry_key);
    size_t at = search_from == std::string::npos ? std::string::npos : text.find("\"" + entry + "\"", search_from);
    if (at != std::string::npos) search_from = at + entry.size() + 2;
    std::string where = at == std::string::npos ? "" : fmt::format(" (byte {})", at);
    // JSON allows a key twice; msprobe never writes one twice, so the file was edited or merged.
    if (!seen.insert(entry).second)
      out.notes.push_back(fmt::format("{}: entry \"{}\" appears more than once{}; each occurrence is paired in "
                                      "order with the other dump's",
                                      name, entry, where));
    dom::object groups;
    if (value.get_object().get(groups)) {
      if (not_objects++ == 0) first_not_object = fmt::format("\"{}\"{}", entry, where);
      continue;
    }
    MsprobeReader r{name, out, entry, out.task == "tensor", at};
    for (auto [group_key, items] : groups) {
      std::string io;
      if (group_key == "input_args" || group_key == "input") io = "input";
      else if (group_key == "output") io = "output";
      else if (group_key == "input_kwargs") io = "kwarg";
      else continue;
      dom::array list;
      dom::object kwargs;
      if (items.get_array().get(list) == simdjson::SUCCESS) {
        size_t i = 0;
        for (dom::element el : list) r.item(el, io, std::to_string(i++));
      } else if (items.get_object().get(kwargs) == simdjson::SUCCESS) {
        for (auto [kw, el] : kwargs) r.item(el, io, std::string(kw));
      }
    }
  }
  if (not_objects)
    out.notes.push_back(fmt::format("{}: {} entr{} not an object of input/output lists and skipped (first: {})", name,
                                    not_objects, not_objects == 1 ? "y is" : "ies are", first_not_object));
}

namespace {
bool is_user_frame(const std::string& file) {
  for (const char* lib : {"/msprobe/", "/site-packages/torch/", "/site-packages/torch_npu/", "/site-packages/mindspore/",
                          "/dist-packages/torch/"})
    if (file.find(lib) != std::string::npos) return false;
  return true;
}
}  // namespace

void parse_msprobe_stack(std::string_view text, const std::string& name, Dump& out) {
  dom::parser parser;
  dom::element doc;
  if (parser.parse(text.data(), text.size()).get(doc)) {
    out.notes.push_back(fmt::format("{}: not valid JSON; stacks not shown", name));
    return;
  }
  dom::object top;
  if (doc.get_object().get(top)) return;
  std::map<std::string, std::vector<DumpFrame>, std::less<>> stacks;
  for (auto [entry, frames] : top) {
    dom::array list;
    if (frames.get_array().get(list)) continue;
    std::vector<DumpFrame> parsed;
    for (dom::element f : list) {
      std::string_view line;
      if (f.get_string().get(line)) continue;
      // "File /path/x.py, line 176, in func, \n code"
      if (line.substr(0, 5) != "File ") continue;
      size_t comma = line.find(", line ");
      if (comma == std::string_view::npos) continue;
      DumpFrame fr;
      fr.file = std::string(line.substr(5, comma - 5));
      size_t p = comma + 7;
      while (p < line.size() && std::isdigit(static_cast<unsigned char>(line[p])))
        fr.line = std::min<int64_t>(fr.line * 10 + (line[p++] - '0'), 1 << 30);
      size_t in = line.find(", in ", p);
      if (in != std::string_view::npos) {
        size_t fn_end = line.find(',', in + 5);
        fr.function = std::string(line.substr(in + 5, fn_end == std::string_view::npos ? std::string_view::npos
                                                                                      : fn_end - in - 5));
      }
      // msprobe's hooks and the frameworks' own frames are not the user's code.
      if (!is_user_frame(fr.file)) continue;
      parsed.push_back(std::move(fr));
    }
    stacks[std::string(entry)] = std::move(parsed);
  }
  for (DumpEntry& e : out.entries)
    if (auto it = stacks.find(e.name); it != stacks.end()) e.stack = it->second;
}

// --- layout detection and file resolution ----------------------------------------------------

namespace {

// root must be canonical. Returns the canonical absolute path of rel under root, or throws.
std::string resolve_inside(const fs::path& root, const std::string& rel, const std::string& index, uint64_t offset,
                           bool has_offset) {
  check_relative_path(rel, index, offset);
  std::error_code ec;
  fs::path p = fs::canonical(root / rel, ec);
  if (ec)
    throw InputError(index, offset, fmt::format("tensor file {} is missing ({})", (root / rel).string(), ec.message()),
                     has_offset);
  std::string r = root.string(), s = p.string();
  if (s.size() <= r.size() || s.compare(0, r.size(), r) != 0 || (r.back() != '/' && s[r.size()] != '/'))
    throw InputError(index, offset, fmt::format("tensor file '{}' resolves to {}, outside the dump directory {} "
                                                "(a link leaving it)", rel, s, r), has_offset);
  return s;
}

fs::path canonical_dir(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::canonical(path, ec);
  if (ec) throw InputError(path, 0, fmt::format("cannot open: {}", ec.message()), false);
  return p;
}

Dump read_ours(const std::string& user_path, const fs::path& index) {
  Dump d;
  d.path = user_path;
  d.index = index.string();
  fs::path root = canonical_dir(index.parent_path().string());
  d.root = root.string();
  parse_index_jsonl(read_file(d.index), d.index, d);
  for (DumpEntry& e : d.entries) e.file = resolve_inside(root, e.file, d.index, e.offset, true);
  return d;
}

Dump read_msprobe(const std::string& user_path, const fs::path& json) {
  Dump d;
  d.path = user_path;
  d.index = json.string();
  fs::path root = canonical_dir(json.parent_path().string());
  d.root = root.string();
  parse_msprobe_json(read_file(d.index), d.index, d);
  std::error_code ec;
  fs::path stack = json.parent_path() / "stack.json";
  if (fs::is_regular_file(stack, ec)) parse_msprobe_stack(read_file(stack.string()), stack.string(), d);
  for (DumpEntry& e : d.entries)
    if (!e.file.empty()) e.file = resolve_inside(root, e.file, d.index, 0, false);
  return d;
}

// Entries of one .pt file of a plain tree: the file's key for a lone tensor, key/name for each
// tensor of a saved dict or list (a state_dict: "model/fc1.weight").
void add_pt_entries(Dump& d, const std::string& rel, const std::string& key, const std::string& file) {
  PtContents c = read_pt_index(file);
  if (c.tensors.empty())
    d.notes.push_back(fmt::format("{}: holds no tensor ({} other values); skipped", file, c.other_values));
  for (const PtTensor& t : c.tensors) {
    DumpEntry e;
    bool lone = t.name.empty();
    e.key = lone ? key : key + "/" + t.name;
    e.kind = "tensor";
    e.name = lone ? rel : rel + ":" + t.name;
    e.group = "tensor";
    e.file = file;
    e.member = t.name;
    e.shape = t.shape;
    e.dtype = t.uncompared_dtype.empty() ? std::string(dtype_name(t.dtype)) : t.uncompared_dtype;
    d.entries.push_back(std::move(e));
  }
}

Dump read_tensor_tree(const std::string& user_path, const fs::path& dir) {
  Dump d;
  d.layout = DumpLayout::PtTree;
  d.task = "tensor";
  d.path = user_path;
  fs::path root = canonical_dir(dir.string());
  d.root = root.string();
  std::vector<std::string> rels;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".npy" && !is_pt_path(p.filename().string())) continue;
    std::error_code fec;
    if (fs::is_directory(p, fec)) continue;
    rels.push_back(fs::relative(p, root, fec).generic_string());
  }
  if (ec) throw InputError(dir.string(), 0, fmt::format("cannot list: {}", ec.message()), false);
  std::sort(rels.begin(), rels.end());
  for (const std::string& rel : rels) {
    std::string file = resolve_inside(root, rel, d.root, 0, false);
    std::string key = rel.substr(0, rel.rfind('.'));
    if (is_pt_path(rel)) {
      add_pt_entries(d, rel, key, file);
      continue;
    }
    d.layout = DumpLayout::NpyTree;
    DumpEntry e;
    e.key = key;
    e.kind = "tensor";
    e.name = rel;
    e.group = "tensor";
    e.file = file;
    NpyHeader h = read_npy_header(e.file);
    e.shape = h.shape;
    e.dtype = std::string(dtype_name(h.dtype));
    d.entries.push_back(std::move(e));
  }
  return d;
}

// dump.json directly in dir, else exactly one under step*/rank*/ (or any depth <= 3).
std::vector<fs::path> find_msprobe_json(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  if (fs::is_regular_file(dir / "dump.json", ec)) return {dir / "dump.json"};
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() >= 3) it.disable_recursion_pending();
    if (it->path().filename() == "dump.json") found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

Dump read_dump(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (fs::is_regular_file(p, ec)) {
    if (p.filename() == "index.jsonl") return read_ours(path, p);
    if (p.extension() == ".json") return read_msprobe(path, p);
    throw InputError(path, 0, "not a dump: name a dump directory, an index.jsonl or an msprobe dump.json", false);
  }
  if (!fs::is_directory(p, ec)) {
    // Neither a regular file nor a directory: open_regular_file says what it is (or that it is absent).
    std::string error;
    int fd = open_regular_file(path, error);
    if (fd >= 0) ::close(fd);
    throw InputError(path, 0, fs::exists(p, ec) ? error : "no such file or directory", false);
  }
  if (fs::is_regular_file(p / "index.jsonl", ec)) return read_ours(path, p / "index.jsonl");
  if (fs::is_regular_file(p / "dump" / "index.jsonl", ec)) return read_ours(path, p / "dump" / "index.jsonl");
  std::vector<fs::path> jsons = find_msprobe_json(p);
  if (jsons.size() == 1) return read_msprobe(path, jsons[0]);
  if (jsons.size() > 1)
    throw InputError(path, 0, fmt::format("{} msprobe dump.json files below this directory (first {}, then {}); name "
                                          "one step/rank directory", jsons.size(), jsons[0].string(), jsons[1].string()),
                     false);
  Dump d = read_tensor_tree(path, p);
  if (d.entries.empty())
    throw InputError(path, 0, "no dump here: no index.jsonl, dump/index.jsonl, msprobe dump.json, .npy or .pt files",
                     false);
  return d;
}

std::string dump_problem(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(fs::path(dir) / "index.jsonl", ec))
    return fmt::format("no tensor dump was written in {} (the dump starts with the capture, when the program imports "
                       "torch)", dir);
  std::string out;
  try {
    Dump d = read_dump(dir);
    if (d.entries.empty())
      out = fmt::format("no tensor was dumped in {}: nothing the selection names ran in the recorded steps", dir);
    for (const std::string& note : d.notes) out += (out.empty() ? "" : "; ") + note;
  } catch (const InputError& e) {
    out = e.describe();
  }
  return out;
}

}  // namespace npud
