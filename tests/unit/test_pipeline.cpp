// The one analysis of a read trace (pipeline/pipeline.hpp) that analyze, run, amp-check, the
// cluster view and diff share: the knowledge version it chooses and why, and per-file-ignores
// dropping findings in it, on a GPU capture from ../shared (skipped when absent).
#include <filesystem>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "ingest/reader.hpp"
#include "pipeline/pipeline.hpp"
#include "require_fixture.hpp"

namespace npud::test {
namespace {

namespace fs = std::filesystem;

const std::string kCapture = std::string(NPUD_SHARED_DIR) + "/fixtures/gpu-h200/nanogpt-run.npud.json.gz";


size_t count_in(const Report& r, std::string_view rule, std::string_view file_name) {
  size_t n = 0;
  for (const Finding& f : r.findings) n += f.rule == rule && fs::path(f.location.file).filename() == file_name;
  return n;
}

TEST(Pipeline, ChoosesTheTorchNpuOfTheTracesTorchLineUnlessOneIsNamed) {
  REQUIRE_FIXTURE(kCapture);
  const Trace t = read_trace(kCapture, {});   // torch 2.11.0+cu130, no torch_npu
  std::string why;
  const KnowledgeVersion& chosen = choose_torch_npu(nullptr, t, why);
  EXPECT_EQ(chosen.version, "2.11.0");
  EXPECT_EQ(why, "newest release for torch 2.11.0+cu130 of the trace");
  const KnowledgeVersion* named = Knowledge::builtin().find("2.1.0.post8");
  ASSERT_NE(named, nullptr);
  EXPECT_EQ(&choose_torch_npu(named, t, why), named);
  EXPECT_EQ(why, "--torch-npu");
  AnalysisSettings s;   // the version resolved once (cli settings_or_report) is the one the report uses
  s.torch_npu = named;
  EXPECT_EQ(analyze_trace(t, s).report.summary.torch_npu, "2.1.0.post8");
}

TEST(Pipeline, PerFileIgnoresLeaveFindingsOutAndAreCounted) {
  REQUIRE_FIXTURE(kCapture);
  const Trace t = read_trace(kCapture, {});
  AnalysisSettings s;
  s.rules = trace_rules();
  const TraceAnalysis all = analyze_trace(t, s);
  EXPECT_EQ(all.report.rules_run.size(), trace_rules().size());
  EXPECT_EQ(all.report.summary.torch_npu, all.version.version);
  EXPECT_EQ(all.report.suppressed, 0u);
  const size_t syncs = count_in(all.report, "SYNC001", "train.py");
  ASSERT_GT(syncs, 0u);
  s.path_ignores.base = "/";
  s.path_ignores.rules.push_back({"train.py", {"SYNC001"}});
  const TraceAnalysis ignored = analyze_trace(t, s);
  EXPECT_EQ(count_in(ignored.report, "SYNC001", "train.py"), 0u);
  EXPECT_EQ(ignored.report.suppressed, syncs);
  EXPECT_EQ(ignored.report.findings.size() + syncs, all.report.findings.size());
}

}  // namespace
}  // namespace npud::test
