#include "rules/rule_pairs.hpp"

namespace npud {
namespace {

struct RulePair {
  std::string_view trace_id, source_id;
};

// Each pair finds one problem: the same fix, one in the source, one in what ran.
constexpr RulePair kRulePairs[] = {
    {"FUSE001", "FUSE101"},      // RMSNorm written out
    {"FUSE003", "FUSE102"},      // rotary embedding written out
    {"FUSE004", "FUSE103"},      // attention written out
    {"FUSE005", "FUSE104"},      // SwiGLU written out
    {"FUSE006", "FUSE105"},      // GELU written out
    {"SYNC001", "SYNC101"},      // host-device syncs (.item() in the loop)
    {"CONTIG002", "CONTIG101"},  // a permuted/transposed view fed to a matmul or conv
    {"AMP004", "AMP101"},        // fp16 autocast without a GradScaler
    {"AMP006", "AMP102"},        // binary cross-entropy inside autocast (raises on the NPU)
    {"FALLBACK002", "API101"},   // an op without an NPU kernel (CPU fallback)
    {"FALLBACK001", "API102"},   // an op that runs on the AI CPU
};

}  // namespace

std::string_view scan_rule_for(std::string_view trace_id) {
  for (const RulePair& p : kRulePairs)
    if (p.trace_id == trace_id) return p.source_id;
  return {};
}

std::string_view run_rule_for(std::string_view source_id) {
  for (const RulePair& p : kRulePairs)
    if (p.source_id == source_id) return p.trace_id;
  return {};
}

}  // namespace npud
