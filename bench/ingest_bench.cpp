// Reads one trace with read_trace, runs every trace rule on it (what `analyze` does), and
// prints one line of JSON: bytes, read seconds, analysis seconds, MB/s of the whole
// pipeline, event counts and the peak RSS of this process.
// Usage: npud_bench_ingest TRACE [REPEAT]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "util/input_error.hpp"
#include "ingest/reader.hpp"
#include "knowledge/knowledge.hpp"
#include "rules/rule.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TRACE [REPEAT]\n", argv[0]);
    return 2;
  }
  int repeat = argc > 2 ? std::atoi(argv[2]) : 1;
  double best = 1e300;
  npud::Trace t;
  for (int i = 0; i < std::max(repeat, 1); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    try {
      t = npud::read_trace(argv[1]);
    } catch (const npud::InputError& e) {
      std::fprintf(stderr, "%s\n", e.describe().c_str());
      return 2;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
  }
  npud::AnalysisContext ctx{t, npud::Knowledge::builtin().newest(), {}};
  (void)npud::Knowledge::builtin();  // parsed once per process, like in the CLI: not analysis time
  size_t findings = 0;
  double analyze_s = 0;
  for (const npud::Rule* rule : npud::trace_rules()) {  // one at a time, to show where time goes
    auto a0 = std::chrono::steady_clock::now();
    findings += npud::run_rules(ctx, {rule}).size();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - a0).count();
    std::fprintf(stderr, "  %-12s %.3f s\n", std::string(rule->id()).c_str(), s);
    analyze_s += s;
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  double mb = double(t.input_bytes) / 1e6;
  std::printf(
      "{\"file\": \"%s\", \"bytes\": %llu, \"seconds\": %.3f, \"mb_per_s\": %.1f, \"analyze_seconds\": %.3f, "
      "\"pipeline_mb_per_s\": %.1f, \"findings\": %zu, \"peak_rss_mb\": %.1f, "
      "\"ops\": %zu, \"kernels\": %zu, \"runtime\": %zu, \"tensors\": %zu}\n",
      argv[1], (unsigned long long)t.input_bytes, best, mb / best, analyze_s, mb / (best + analyze_s), findings,
      double(ru.ru_maxrss) / 1024.0, t.ops.size(), t.kernels.size(), t.runtime.size(), t.tensors.size());
  return 0;
}
