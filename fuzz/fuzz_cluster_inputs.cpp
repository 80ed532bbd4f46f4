// libFuzzer harness: the cluster view's inputs. The same bytes go through the rank summary
// reader (`merge`), msprof's per-rank communication.json reader, and msprof-analyze's
// cluster_analysis_output reader (as both its CSV and its JSON). The readers take paths, so
// each input is written to per-process temporary files first.
// fuzz-seeds: cluster_step_trace_time.csv cluster_communication.json
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cluster/cluster_input.hpp"
#include "cluster/cluster_report.hpp"
#include "cluster/merged_summary.hpp"
#include "cluster/msprof_ranks.hpp"
#include "cluster/rank_summary.hpp"
#include "ingest/communication_json.hpp"
#include "util/input_error.hpp"

namespace {

const std::filesystem::path& work_dir() {
  static const std::filesystem::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::filesystem::path d = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") /
                              ("npud_fuzz_cluster_" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    // libFuzzer ends with exit(): the folder goes with the process, not one left per run.
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(work_dir(), ec);
    });
    return d;
  }();
  return dir;
}

void write(const std::filesystem::path& p, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(p.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& dir = work_dir();
  auto csv = dir / "cluster_step_trace_time.csv", json = dir / "cluster_communication.json";
  write(csv, data, size);
  write(json, data, size);
  try {
    npud::read_rank_summary(json.string());
  } catch (const npud::InputError&) {
  }
  try {   // a merged summary read and reported: every index it holds is checked on reading
    npud::ClusterInput in;
    npud::read_merged_summary(json.string(), in);
    npud::build_cluster_report(in, "fuzz");
  } catch (const npud::InputError&) {
  }
  try {
    npud::read_rank_communication(json.string());
  } catch (const npud::InputError&) {
  }
  try {
    npud::read_msprof_cluster(dir.string());
  } catch (const npud::InputError&) {
  }
  return 0;
}
