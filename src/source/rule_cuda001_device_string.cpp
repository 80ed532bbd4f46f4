// CUDA001 cuda-device-string: a CUDA device string ('cuda', 'cuda:1', f'cuda:{rank}') used as a
// device; fix: 'npu'. See docs/rules/CUDA001.md.
#include "knowledge/advice_texts.hpp"
#include "source/cuda_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <algorithm>
#include <cctype>
#include <string>

namespace npud::cuda_rules {

CudaLiteral cuda_literal(std::string_view src, TSNode n) {
  CudaLiteral out;
  std::string_view t = py::text_of(src, n);
  size_t q = t.find_first_of("'\"");
  if (q == std::string_view::npos) return out;
  bool f_string = false;
  for (size_t i = 0; i < q; ++i) {
    char c = char(std::tolower(static_cast<unsigned char>(t[i])));
    if (c == 'f') f_string = true;
    else if (c != 'r' && c != 'u') return out;  // bytes
  }
  uint32_t cs = py::string_content_start(src, n);
  size_t quotes = cs - ts_node_start_byte(n) - q;
  size_t off = cs - ts_node_start_byte(n);
  if (t.size() < off + quotes) return out;
  std::string_view content = t.substr(off, t.size() - off - quotes);
  if (!content.starts_with("cuda") || content.find('\\') != std::string_view::npos) return out;
  std::string_view rest = content.substr(4);
  auto digits = [](std::string_view d) {
    return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  };
  bool exact = rest.empty() || (rest[0] == ':' && digits(rest.substr(1)));
  if (exact && f_string && content.find('{') != std::string_view::npos) return out;
  bool templ = false;
  if (!exact && rest.starts_with(':')) {
    std::string_view r = rest.substr(1);
    bool one_field = r.size() >= 2 && r.front() == '{' && r.back() == '}' && r.find('{', 1) == std::string_view::npos;
    templ = r.empty() || one_field || r == "%d" || r == "%s" || r == "%i";
  }
  if (!exact && !templ) return out;
  out.found = true;
  out.templ = templ;
  out.at = cs;
  out.text = content;
  return out;
}


void report_device_literal(TSNode n, Context c, FileScan& fs) {
  CudaLiteral lit = cuda_literal(fs.text, n);
  std::string shown(lit.text);
  std::string repl = "npu" + shown.substr(4);
  std::string msg = "CUDA device string '" + shown + "': there is no CUDA device on an Ascend NPU";
  if (c == Context::Test)
    msg += "; this test is False for an NPU device, so what it gates (autocast, a fused optimizer, "
           "pin_memory) silently takes the CPU path";
  auto& f = fs.report("CUDA001", Severity::Error, n, std::move(msg), "'" + repl + "'");
  f.edits.push_back({lit.at, lit.at + 4, "npu"});
}

}  // namespace npud::cuda_rules

#endif  // NPUD_HAVE_TREE_SITTER
