// CUDA003 cuda-api: torch.cuda.X calls and imports from torch.cuda; fix: torch.npu.X where torch_npu
// mirrors X with the same meaning. See docs/rules/CUDA003.md.
#include "knowledge/advice_texts.hpp"
#include "source/cuda_gates.hpp"
#include "source/cuda_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <algorithm>
#include <array>
#include <string>

namespace npud::cuda_rules {

using py::Kind;

// torch.cuda members that torch_npu mirrors under torch.npu with the same meaning.
constexpr std::array<std::string_view, 30> kNpuMirrors = {
    "synchronize",    "is_available",         "device_count",         "set_device",
    "current_device", "manual_seed",          "manual_seed_all",      "empty_cache",
    "memory_allocated", "max_memory_allocated", "memory_reserved",    "max_memory_reserved",
    "reset_peak_memory_stats", "Event",       "Stream",               "current_stream",
    "default_stream", "stream",               "amp",                  "get_device_name",
    "device",         "seed",                 "initial_seed",         "get_device_properties",
    "memory_stats",   "memory_summary",       "is_initialized",       "set_stream",
    "reset_max_memory_allocated", "is_bf16_supported"};

void report_torch_cuda(TSNode n, TSNode p, TSNode attr, std::string_view member, FileScan& fs) {
  if (!member.empty() && npu_mirrors(member)) {
    auto& fd = fs.report("CUDA003", Severity::Error, p,
                         "torch.cuda." + std::string(member) + " drives the CUDA runtime; torch_npu provides torch.npu." +
                             std::string(member),
                         "torch.npu." + std::string(member));
    fd.edits.push_back({ts_node_start_byte(attr), ts_node_end_byte(attr), "npu"});
  } else {
    fs.report("CUDA003", Severity::Error, member.empty() ? n : p,
              "torch.cuda" + (member.empty() ? std::string() : "." + std::string(member)) +
                  " has no known torch.npu equivalent",
              advice("CUDA003", "fix_call"));
  }
}

void check_import_from(TSNode n, FileScan& fs) {
  const auto& f = py::fields();
  TSNode mod = py::field(n, f.module_name);
  if (ts_node_is_null(mod) || py::kind(mod) != Kind::DottedName) return;
  std::string_view m = fs.text_of(mod);
  if (m.starts_with("torch_npu")) return;
  if (m != "torch.cuda" && !m.starts_with("torch.cuda.")) return;
  if (ts_node_named_child_count(mod) < 2) return;
  TSNode cuda = ts_node_named_child(mod, 1);
  // `from torch.cuda import X, Y`: fixable when torch.npu has every X.
  bool all_mirrored = true;
  std::string names;
  if (m == "torch.cuda") {
    uint32_t cnt = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < cnt; ++i) {
      TSNode c = ts_node_named_child(n, i);
      if (ts_node_eq(c, mod) || py::kind(c) == Kind::Comment) continue;
      TSNode nm = py::kind(c) == Kind::AliasedImport ? py::field(c, f.name) : c;
      std::string_view x = fs.text_of(nm);
      if (!npu_mirrors(x)) all_mirrored = false;
    }
  } else {
    TSNode member = ts_node_named_child(mod, 2);
    all_mirrored = !ts_node_is_null(member) && npu_mirrors(fs.text_of(member));
  }
  std::string npu = "torch.npu" + std::string(m.substr(10));
  if (all_mirrored) {
    auto& fd = fs.report("CUDA003", Severity::Error, mod,
                         "import from " + std::string(m) + ", the CUDA runtime; torch_npu provides " + npu, npu);
    fd.edits.push_back({ts_node_start_byte(cuda), ts_node_end_byte(cuda), "npu"});
  } else {
    fs.report("CUDA003", Severity::Error, mod,
              "import from " + std::string(m) + " names something torch.npu has no known equivalent of",
              advice("CUDA003", "fix_import"));
  }
}

}  // namespace npud::cuda_rules

namespace npud {

bool npu_mirrors(std::string_view cuda_member) {
  return std::find(cuda_rules::kNpuMirrors.begin(), cuda_rules::kNpuMirrors.end(), cuda_member) !=
         cuda_rules::kNpuMirrors.end();
}

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
