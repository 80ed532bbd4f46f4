// What the cluster view needs of any number of ranks, in a form that composes: folding rank
// summaries one at a time, or folding the folds of parts of a job, gives the same view
// (`merge --format summary`, docs/cluster.md "Very large jobs"). A rank keeps its step
// breakdown and the rest of its summary; its collectives become the per-step sum of their
// durations plus patterns of collective keys that the other members of its process group share;
// its findings become ids into one table. A key keeps the shortest duration any rank had, which
// is all the estimated waits need. So a fold's size grows with ranks x steps, not with the
// ranks' collectives, and findings every rank has are held once.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster/rank_summary.hpp"
#include "model/finding.hpp"

namespace npud {

// One collective operation across ranks: the `ordinal`-th collective named `name` that the
// ranks of `group` ran in step `step_number`.
struct CollectiveKey {
  uint32_t group = kNoGroup;    // index into ClusterInput::group_names
  uint32_t name = 0;            // index into ClusterInput::collective_names
  int64_t step_number = -1;
  uint32_t ordinal = 0;
  bool operator==(const CollectiveKey&) const = default;
};

struct MergedRank {
  RankSummary summary;          // its collectives and findings moved into the fields below
  // (step number, summed duration of the rank's collectives in that step), by step number.
  std::vector<std::pair<int64_t, int64_t>> collective_ns;
  std::vector<uint32_t> patterns;       // ClusterInput::patterns: its collectives, one per process group
  std::vector<uint32_t> finding_ids;    // ClusterInput::findings, each once (HOT001 left out)
  size_t finding_count = 0;             // its findings other than HOT001, repeats counted
};

// A finding (by finding_identity) as the lowest rank that has it reported it.
struct FindingEntry {
  Finding finding;
  int64_t rank = -1;
};

class ClusterInput {
 public:
  std::vector<MergedRank> ranks;              // in the order added
  std::vector<std::string> collective_names, group_names;
  std::vector<CollectiveKey> keys;
  std::vector<int64_t> shortest_ns;           // per key: the shortest duration of any rank
  std::vector<std::vector<uint32_t>> patterns;   // key ids in the order the ranks ran them
  std::vector<FindingEntry> findings;
  std::vector<std::string> notes;             // what reading the inputs of a fold said

  void add(RankSummary s);
  void add(ClusterInput other);

  // A rank's waits per step number, estimated from its collectives: each collective's duration
  // less the shortest any rank had for the same key (docs/cluster.md "Waits").
  std::vector<std::pair<int64_t, int64_t>> estimated_waits(const MergedRank& r) const;
  // Whether some rank's collectives carry their process group.
  bool records_groups() const;

 private:
  uint32_t intern(std::vector<std::string>& table, std::unordered_map<std::string, uint32_t>& index, const std::string& s);
  uint32_t key_id(const CollectiveKey& k, int64_t dur_ns);
  uint32_t pattern_id(std::vector<uint32_t> keys);
  uint32_t finding_id(Finding f, int64_t rank);

  struct KeyHash {
    size_t operator()(const CollectiveKey& k) const;
  };
  struct PatternHash {
    size_t operator()(const std::vector<uint32_t>& p) const;
  };
  std::unordered_map<std::string, uint32_t> name_index_, group_index_, finding_index_;
  std::unordered_map<CollectiveKey, uint32_t, KeyHash> key_index_;
  std::unordered_map<std::vector<uint32_t>, uint32_t, PatternHash> pattern_index_;
  // Per pattern: (step number, summed shortest durations of its keys), made when first asked.
  mutable std::vector<std::vector<std::pair<int64_t, int64_t>>> pattern_shortest_;
};

}  // namespace npud
