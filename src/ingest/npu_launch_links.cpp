#include "ingest/npu_launch_links.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace npud {

namespace {

// Ops nested deeper than this around one launch are not searched (a launch sits a few levels
// below its aten op).
constexpr size_t kMaxBackwardScan = 512;
// External ids made for ops that had none: far above any profiler's counters.
constexpr int64_t kFirstMadeId = int64_t(1) << 60;

}  // namespace

void NpuLaunchLinks::add(char ph, int64_t id, int32_t pid, int32_t tid, int64_t ts_ns) {
  if (ph != 's' && ph != 'f') return;
  auto& pair = flows_[id];
  End& e = ph == 's' ? pair.first : pair.second;
  e = {pid, tid, ts_ns, true};
}

size_t NpuLaunchLinks::apply(Trace& t) const {
  if (flows_.empty()) return 0;
  std::multimap<int64_t, uint32_t> kernel_at;  // start -> kernel
  for (uint32_t i = 0; i < t.kernels.size(); ++i)
    if (t.kernels[i].external_id == kUnset) kernel_at.emplace(t.kernels[i].start_ns, i);
  // Ops of each thread by start.
  std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> by_thread;
  for (uint32_t i = 0; i < t.ops.size(); ++i) by_thread[{t.ops[i].pid, t.ops[i].tid}].push_back(i);
  for (auto& [key, v] : by_thread)
    std::sort(v.begin(), v.end(), [&t](uint32_t a, uint32_t b) { return t.ops[a].start_ns < t.ops[b].start_ns; });

  // In flow-id order: which kernel of two that start together a flow links, and the ids made,
  // must not follow the hash table's order (it differs between C++ libraries: the dumps of the
  // zig and the check builds differed).
  std::vector<const std::pair<const int64_t, std::pair<End, End>>*> flows;
  flows.reserve(flows_.size());
  for (const auto& flow : flows_) flows.push_back(&flow);
  std::sort(flows.begin(), flows.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  int64_t next_id = kFirstMadeId;
  size_t linked = 0;
  for (const auto* flow : flows) {
    const auto& [s, f] = flow->second;
    if (!s.set || !f.set) continue;
    auto k = kernel_at.find(f.ts);
    auto th = by_thread.find({s.pid, s.tid});
    if (k == kernel_at.end() || th == by_thread.end()) continue;
    const auto& ops = th->second;
    auto it = std::upper_bound(ops.begin(), ops.end(), s.ts, [&t](int64_t ts, uint32_t o) { return ts < t.ops[o].start_ns; });
    uint32_t op = kNone;
    for (size_t n = 0; it != ops.begin() && n < kMaxBackwardScan; ++n) {
      const Op& cand = t.ops[*--it];
      if (cand.start_ns + cand.dur_ns >= s.ts) {
        op = *it;
        break;
      }
    }
    if (op == kNone) continue;
    if (t.ops[op].external_id == kUnset) t.ops[op].external_id = next_id++;
    t.kernels[k->second].external_id = t.ops[op].external_id;
    kernel_at.erase(k);
    ++linked;
  }
  return linked;
}

}  // namespace npud
