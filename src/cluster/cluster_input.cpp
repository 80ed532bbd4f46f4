#include "cluster/cluster_input.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace npud {

namespace {

// (step, ns) pairs summed by step, sorted by step.
std::vector<std::pair<int64_t, int64_t>> by_step(const std::map<int64_t, int64_t>& m) {
  return {m.begin(), m.end()};
}

}  // namespace

size_t ClusterInput::KeyHash::operator()(const CollectiveKey& k) const {
  size_t h = std::hash<int64_t>()(k.step_number);
  h ^= (size_t(k.name) * 0x9E3779B97F4A7C15ull) + (h << 6) + (h >> 2);
  h ^= (size_t(k.group) * 0xC2B2AE3D27D4EB4Full) + (h << 6) + (h >> 2);
  return h ^ (size_t(k.ordinal) << 20);
}

size_t ClusterInput::PatternHash::operator()(const std::vector<uint32_t>& p) const {
  size_t h = p.size();
  for (uint32_t k : p) h ^= size_t(k) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h;
}

uint32_t ClusterInput::intern(std::vector<std::string>& table, std::unordered_map<std::string, uint32_t>& index,
                              const std::string& s) {
  auto [it, fresh] = index.try_emplace(s, uint32_t(table.size()));
  if (fresh) table.push_back(s);
  return it->second;
}

uint32_t ClusterInput::key_id(const CollectiveKey& k, int64_t dur_ns) {
  auto [it, fresh] = key_index_.try_emplace(k, uint32_t(keys.size()));
  if (fresh) {
    keys.push_back(k);
    shortest_ns.push_back(dur_ns);
  } else {
    shortest_ns[it->second] = std::min(shortest_ns[it->second], dur_ns);
  }
  return it->second;
}

uint32_t ClusterInput::pattern_id(std::vector<uint32_t> p) {
  auto it = pattern_index_.find(p);
  if (it != pattern_index_.end()) return it->second;
  uint32_t id = uint32_t(patterns.size());
  pattern_index_.emplace(p, id);
  patterns.push_back(std::move(p));
  return id;
}

uint32_t ClusterInput::finding_id(Finding f, int64_t rank) {
  auto [it, fresh] = finding_index_.try_emplace(finding_identity(f), uint32_t(findings.size()));
  if (fresh) findings.push_back({std::move(f), rank});
  else if (rank < findings[it->second].rank) findings[it->second] = {std::move(f), rank};
  return it->second;
}

void ClusterInput::add(RankSummary s) {
  pattern_shortest_.clear();
  MergedRank m;
  // The rank's collectives, one key list per process group in the order the rank first ran
  // one of the group's; the ordinal counts a name's collectives per group and step.
  std::vector<uint32_t> names, groups;
  for (const auto& n : s.collective_names) names.push_back(intern(collective_names, name_index_, n));
  for (const auto& g : s.group_names) groups.push_back(intern(group_names, group_index_, g));
  std::map<std::tuple<uint32_t, uint32_t, int64_t>, uint32_t> ordinals;
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> per_group;
  std::map<int64_t, int64_t> sums;
  for (const Collective& c : s.collectives) {
    CollectiveKey k;
    k.group = c.group == kNoGroup ? kNoGroup : groups[c.group];
    k.name = names[c.name];
    k.step_number = c.step_number;
    k.ordinal = ordinals[{k.group, k.name, k.step_number}]++;
    auto slot = std::find_if(per_group.begin(), per_group.end(), [&](const auto& p) { return p.first == k.group; });
    if (slot == per_group.end()) slot = per_group.insert(per_group.end(), {k.group, {}});
    slot->second.push_back(key_id(k, c.dur_ns));
    sums[c.step_number] += c.dur_ns;
  }
  for (auto& [group, list] : per_group) m.patterns.push_back(pattern_id(std::move(list)));
  m.collective_ns = by_step(sums);
  for (Finding& f : s.findings) {
    if (f.rule == "HOT001") continue;   // a ranking of where time goes, not a problem ranks differ in
    ++m.finding_count;
    uint32_t id = finding_id(std::move(f), s.rank);
    if (std::find(m.finding_ids.begin(), m.finding_ids.end(), id) == m.finding_ids.end()) m.finding_ids.push_back(id);
  }
  // Let go of what was folded (`v = {}` would keep the capacity).
  std::vector<Collective>().swap(s.collectives);
  std::vector<std::string>().swap(s.collective_names);
  std::vector<std::string>().swap(s.group_names);
  std::vector<Finding>().swap(s.findings);
  m.summary = std::move(s);
  ranks.push_back(std::move(m));
}

void ClusterInput::add(ClusterInput other) {
  pattern_shortest_.clear();
  std::vector<uint32_t> names, groups, key_map, pattern_map, finding_map;
  for (const auto& n : other.collective_names) names.push_back(intern(collective_names, name_index_, n));
  for (const auto& g : other.group_names) groups.push_back(intern(group_names, group_index_, g));
  for (size_t i = 0; i < other.keys.size(); ++i) {
    CollectiveKey k = other.keys[i];
    k.name = names[k.name];
    if (k.group != kNoGroup) k.group = groups[k.group];
    key_map.push_back(key_id(k, other.shortest_ns[i]));
  }
  for (auto& p : other.patterns) {
    for (uint32_t& k : p) k = key_map[k];
    pattern_map.push_back(pattern_id(std::move(p)));
  }
  for (FindingEntry& e : other.findings) finding_map.push_back(finding_id(std::move(e.finding), e.rank));
  for (MergedRank& r : other.ranks) {
    for (uint32_t& p : r.patterns) p = pattern_map[p];
    for (uint32_t& f : r.finding_ids) f = finding_map[f];
    ranks.push_back(std::move(r));
  }
  for (auto& n : other.notes) notes.push_back(std::move(n));
}

std::vector<std::pair<int64_t, int64_t>> ClusterInput::estimated_waits(const MergedRank& r) const {
  if (pattern_shortest_.size() != patterns.size()) pattern_shortest_.assign(patterns.size(), {});
  std::map<int64_t, int64_t> shortest;
  for (uint32_t p : r.patterns) {
    auto& cached = pattern_shortest_[p];
    if (cached.empty() && !patterns[p].empty()) {
      std::map<int64_t, int64_t> sums;
      for (uint32_t k : patterns[p]) sums[keys[k].step_number] += shortest_ns[k];
      cached = by_step(sums);
    }
    for (const auto& [step, ns] : cached) shortest[step] += ns;
  }
  // A key only this rank ran has its own duration as the shortest: no wait, as it should be.
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& [step, ns] : r.collective_ns) {
    auto it = shortest.find(step);
    out.emplace_back(step, ns - (it == shortest.end() ? 0 : it->second));
  }
  return out;
}

bool ClusterInput::records_groups() const { return !group_names.empty(); }

}  // namespace npud
