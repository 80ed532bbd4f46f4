// The knowledge base against the real data (data/knowledge, generated from
// ../shared/data/npu-ops and npu-ops-release): facts checked here were grepped from the lists.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "knowledge/knowledge.hpp"
#include "knowledge/knowledge_data.hpp"
#include "knowledge/npu_coverage.hpp"
#include "require_fixture.hpp"

namespace npud {
namespace {

const Knowledge& kb() { return Knowledge::builtin(); }

const KnowledgeVersion& version(std::string_view v) {
  const KnowledgeVersion* kv = kb().find(v);
  if (!kv) throw std::runtime_error("missing version " + std::string(v));
  return *kv;
}

TEST(Knowledge, WheelsPerLineThenDevTip) {
  const auto& vs = kb().versions();
  // 68 release tags + 8 untagged branch tips + 1 source build + 19 development tips
  // (../shared/data/npu-ops-release/SOURCE.md, ../shared/data/npu-ops).
  ASSERT_EQ(vs.size(), 96u);
  EXPECT_EQ(vs.front().version, "1.5.0-dev");
  EXPECT_EQ(vs.back().version, "2.15.0-dev");
  EXPECT_EQ(kb().newest().version, "2.12.0");  // the newest wheel built at a release tag
  EXPECT_EQ(kb().newest().kind, "release");
  EXPECT_EQ(kb().lines().front(), "1.5.0");
  EXPECT_EQ(kb().lines().back(), "2.15.0");
  // Sizes from the SOURCE.md tables (aten lines per list).
  EXPECT_EQ(version("2.1.0-dev").list().aten.size(), 1072u);
  EXPECT_EQ(version("2.7.1-dev").list().aten.size(), 1088u);
  EXPECT_EQ(version("1.5.0-dev").list().aten.size(), 817u);
  EXPECT_EQ(version("2.13.0-dev").list().custom.size(), 422u);
  EXPECT_EQ(version("2.1.0.post8").list().aten.size(), 1084u);  // tag v6.0.rc3-pytorch2.1.0
  EXPECT_EQ(version("2.1.0.rc1").list().aten.size(), 929u);
  // Equal lists are stored once: 2.1.0.post6 and .post7 pin the same op-plugin commit.
  EXPECT_EQ(&version("2.1.0.post6").list(), &version("2.1.0.post7").list());
  EXPECT_NE(&version("2.1.0.post7").list(), &version("2.1.0.post8").list());
}

// builtin() builds a list when a version of it is first asked for: every list of the embedded
// data builds (no malformed row waits for a user's first analyze), and each equals the one an
// eager parse of the same data builds.
TEST(Knowledge, EveryEmbeddedListBuildsOnDemandAsAnEagerParseBuildsIt) {
  const Knowledge& lazy = Knowledge::builtin();
  std::vector<std::pair<std::string_view, std::string_view>> files;
  for (const EmbeddedFile& f : embedded_knowledge()) files.emplace_back(f.name, f.bytes);
  const Knowledge eager = Knowledge::parse_files(files);
  ASSERT_EQ(lazy.versions().size(), eager.versions().size());
  for (size_t i = 0; i < lazy.versions().size(); ++i) {
    const OpList& a = lazy.versions()[i].list();
    const OpList& b = eager.versions()[i].list();
    EXPECT_EQ(a.aten, b.aten) << lazy.versions()[i].version;
    EXPECT_EQ(a.custom, b.custom);
    EXPECT_EQ(a.impl, b.impl);
    EXPECT_EQ(a.tocpu, b.tocpu);
    EXPECT_EQ(a.unsupported, b.unsupported);
    EXPECT_GT(a.aten.size(), 0u) << lazy.versions()[i].version;
  }
  EXPECT_EQ(lazy.custom_schema("npu_rms_norm"), eager.custom_schema("npu_rms_norm"));
  EXPECT_FALSE(lazy.custom_schema("npu_rms_norm").empty());
}

TEST(Knowledge, WheelMetadata) {
  const KnowledgeVersion& w = version("2.1.0.post8");
  EXPECT_EQ(w.kind, "release");
  EXPECT_EQ(w.torch, "2.1.0");
  EXPECT_EQ(w.ref, "v6.0.rc3-pytorch2.1.0");
  EXPECT_EQ(w.torch_npu_commit, "1fa937ac8262");
  EXPECT_EQ(w.op_plugin_commit, "070332e65baf");
  EXPECT_EQ(w.cann, "8.0.RC3");
  EXPECT_EQ(w.describe(), "torch_npu 2.1.0.post8 (release tag v6.0.rc3-pytorch2.1.0, op-plugin 070332e65baf)");
  EXPECT_EQ(version("2.9.0.post1").cann, "8.5.0");  // "8.5.0*": a patch line mapped to its .0 line
  EXPECT_EQ(version("2.1.0.post9").kind, "branch-tip");  // v2.1.0-6.0.rc3's tip, never tagged
  EXPECT_EQ(version("2.10.0-dev").cann, "");             // nothing invented for development tips
  EXPECT_NE(version("2.15.0-dev").describe().find("no released wheel"), std::string::npos);
}

TEST(Knowledge, FindAcceptsCommonSpellings) {
  auto name = [](std::string_view v) {
    const KnowledgeVersion* kv = kb().find(v);
    return kv ? kv->version : std::string("(none)");
  };
  EXPECT_EQ(name("2.1.0"), "2.1.0");        // a bare line: its first final release
  EXPECT_EQ(kb().find("2.1.0")->kind, "release");
  EXPECT_EQ(name("2.1"), "2.1.0");
  EXPECT_EQ(name("v2.1.0"), "2.1.0");
  EXPECT_EQ(name("2.10"), "2.10.0");
  EXPECT_EQ(name("2.1.0.post3"), "2.1.0.post3");
  EXPECT_EQ(name("2.1.0.post8+git1fa937a"), "2.1.0.post8");  // local label: the same wheel version
  EXPECT_EQ(name("2.1.0+cpu"), "2.1.0");
  EXPECT_EQ(name("2.6.0.post6+gitacf101a"), "2.6.0.post6+gitacf101a");  // the reported source build
  EXPECT_EQ(name("v2.7.1-26.1.0"), "2.7.1.post10");  // a release branch: the wheel at its tip
  EXPECT_EQ(name("2.7.1-26.1.0"), "2.7.1.post10");
  EXPECT_EQ(name("v2.1.0-6.0.rc2"), "2.1.0.post7");  // tip version also tagged: the tag's entry
  EXPECT_EQ(name("2.13.0"), "2.13.0-dev");  // no release in this line
  EXPECT_EQ(name("2.15"), "2.15.0-dev");
  EXPECT_EQ(name("2.1.0-dev"), "2.1.0-dev");
  EXPECT_EQ(name("2.1.0.post99"), "(none)");
  EXPECT_EQ(name("2.7.1.post5"), "(none)");  // set between two tags: no list
  EXPECT_EQ(name("9.9.9"), "(none)");
  EXPECT_EQ(name("2.1.5"), "(none)");
  EXPECT_EQ(name("2"), "(none)");
  EXPECT_EQ(name(""), "(none)");
  EXPECT_EQ(name("banana"), "(none)");
  EXPECT_NE(kb().known_names("2.1.0.post99").find("2.1.0.post8"), std::string::npos);
  EXPECT_EQ(kb().known_names("2.1.0.post99").find("2.2.0"), std::string::npos);
}

TEST(Knowledge, IsinTensorTensorPerWheel) {
  // Release SOURCE.md: absent from every 2.1.0 wheel up to 2.1.0.post7 and every 2.2.0 wheel;
  // present from 2.1.0.post8; both development tips list it.
  for (const char* v : {"2.1.0.rc1", "2.1.0", "2.1.0.post3", "2.1.0.post7", "2.2.0", "2.2.0.post3"})
    EXPECT_FALSE(version(v).has_npu_kernel_exact("isin.Tensor_Tensor_out")) << v;
  for (const char* v : {"2.1.0.post8", "2.1.0.post18", "2.3.1.post2", "2.4.0", "2.12.0", "2.1.0-dev", "2.2.0-dev"})
    EXPECT_TRUE(version(v).has_npu_kernel_exact("isin.Tensor_Tensor_out")) << v;
  // scatter_reduce.two_out: only development tips list it (2.7.1, 2.9.0-2.15.0), no release.
  EXPECT_FALSE(version("2.9.0.post1").has_npu_kernel_exact("scatter_reduce.two_out"));
  EXPECT_FALSE(version("2.12.0").has_npu_kernel_exact("scatter_reduce.two_out"));
  EXPECT_TRUE(version("2.9.0-dev").has_npu_kernel_exact("scatter_reduce.two_out"));
  for (const char* v : {"1.5.0-dev", "1.8.1-dev", "1.11.0-dev", "2.0.1-dev"})
    EXPECT_FALSE(version(v).has_npu_kernel("isin.Tensor_Tensor_out")) << v;
  // No overload (Kineto spelling): any listed overload counts; 1.11.0 lists isin.Tensor_Scalar.
  EXPECT_TRUE(version("1.11.0-dev").has_npu_kernel("aten::isin"));
  EXPECT_FALSE(version("1.8.1-dev").has_npu_kernel("aten::isin"));
  EXPECT_TRUE(version("2.0.1-dev").is_unsupported("aten::isin.Tensor_Tensor_out"));
  EXPECT_FALSE(version("2.1.0-dev").is_unsupported("aten::isin.Tensor_Tensor_out"));
}

TEST(Knowledge, BareNameIsTheDefaultOverloadWhenExact) {
  // mode.dimname and mode.values may be listed; `mode` (the default overload) is not in 2.1.0.post8.
  const KnowledgeVersion& v = version("2.1.0.post8");
  EXPECT_FALSE(v.has_npu_kernel_exact("aten::mode"));
  const DispatchFacts& d = kb().dispatch();
  EXPECT_EQ(d.kind("aten::mode", d.column("2.1.0"), true), DispatchKind::Backend);
  EXPECT_TRUE(v.has_npu_kernel_exact("aten::add.Tensor"));
  EXPECT_TRUE(v.has_npu_kernel_exact("torch.ops.aten.addmm.default"));
}

TEST(Knowledge, NameSpellings) {
  const KnowledgeVersion& v = version("2.1.0-dev");
  EXPECT_TRUE(v.has_npu_kernel("aten::add.Tensor"));
  EXPECT_TRUE(v.has_npu_kernel("aten::add"));
  EXPECT_TRUE(v.has_npu_kernel("aten::add_"));         // in-place variants are their own names
  EXPECT_TRUE(v.has_npu_kernel("add_.Tensor"));
  EXPECT_TRUE(v.has_npu_kernel("aten.add.Tensor"));
  EXPECT_TRUE(v.has_npu_kernel("torch.ops.aten.addmm.default"));  // default overload = "addmm"
  EXPECT_FALSE(v.has_npu_kernel("aten::add.NoSuchOverload"));
  EXPECT_FALSE(v.has_npu_kernel("aten::linear"));       // composite: never listed
  // 2.6+ lists the structured op only as gelu.out: exact "gelu" is absent, Kineto's "aten::gelu" matches.
  EXPECT_TRUE(version("2.5.1-dev").has_npu_kernel("aten::gelu.default"));
  EXPECT_FALSE(version("2.7.1-dev").has_npu_kernel("aten::gelu.default"));
  EXPECT_TRUE(version("2.7.1-dev").has_npu_kernel("aten::gelu"));
}

TEST(Knowledge, DispatchFactsPerTorch) {
  const DispatchFacts& d = kb().dispatch();
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d.lines()[d.column("2.13.0+cpu")], "2.13");
  EXPECT_EQ(d.lines()[d.column("1.13.0a0")], "1.13");
  EXPECT_EQ(d.lines()[d.column("2.1.0")], "2.1");
  EXPECT_EQ(d.column("1.11.0"), 0u);                    // older than the table: its first column
  EXPECT_EQ(d.column("9.0"), d.lines().size() - 1);     // newer: its last
  EXPECT_EQ(d.column("not a version"), std::string_view::npos);
  size_t c213 = d.column("2.13.0"), c21 = d.column("2.1.2");
  EXPECT_EQ(d.kind("linear", c213, false), DispatchKind::Implicit);
  EXPECT_EQ(d.kind("aten::layer_norm", c21, false), DispatchKind::Implicit);
  EXPECT_EQ(d.kind("aten::softmax", c213, false), DispatchKind::Implicit);   // softmax.int
  EXPECT_EQ(d.kind("aten::_softmax", c213, false), DispatchKind::NonFunctional);   // structured: _softmax.out
  EXPECT_EQ(d.kind("aten::_softmax.out", c213, true), DispatchKind::Backend);
  EXPECT_EQ(d.kind("aten::add.Scalar", c213, true), DispatchKind::Explicit);
  EXPECT_EQ(d.kind("aten::isin.Tensor_Tensor", c213, true), DispatchKind::NonFunctional);
  EXPECT_EQ(d.delegate("aten::isin.Tensor_Tensor"), "isin.Tensor_Tensor_out");
  EXPECT_EQ(d.kind("aten::no_such_op", c213, false), DispatchKind::Unknown);
  // Dispatch changes between releases: the foreach mul by a tensor is backend-only up to 2.3.
  EXPECT_EQ(d.kind("aten::_foreach_mul_.Tensor", c21, true), DispatchKind::Backend);
  EXPECT_EQ(d.kind("aten::_foreach_mul_.Tensor", c213, true), DispatchKind::Explicit);
  // absent in 2.0 (added in 2.1): the nearest column where it exists
  EXPECT_EQ(d.kind("aten::_foreach_mul_.Tensor", d.column("2.0.1"), true), DispatchKind::Backend);
}

TEST(Knowledge, NpuCoverage) {
  const DispatchFacts& d = kb().dispatch();
  const KnowledgeVersion& v = version("2.1.0.post8");
  size_t c = d.column(v.torch);
  auto coverage = [&](std::string_view op) { return npu_coverage(v, op, true, d.kind(op, c, true), d, c).coverage; };
  EXPECT_EQ(coverage("aten::add.Tensor"), Coverage::Kernel);
  EXPECT_EQ(coverage("aten::linear"), Coverage::Decomposed);
  // special_entr wraps special_entr.out, which no torch_npu lists: a CPU fallback (a user report)
  CoverageAnswer entr = npu_coverage(v, "aten::special_entr", true, d.kind("special_entr", c, true), d, c);
  EXPECT_EQ(entr.coverage, Coverage::FallsBack);
  EXPECT_EQ(entr.missing, "special_entr.out");
  // torch 2.13 runs the foreach mul per tensor where the wheel has no kernel for it
  size_t c213 = d.column("2.13.0");
  if (!v.has_npu_kernel_exact("_foreach_mul_.Tensor"))
    EXPECT_EQ(npu_coverage(v, "aten::_foreach_mul_.Tensor", true, d.kind("_foreach_mul_.Tensor", c213, true), d,
                           c213).coverage,
              Coverage::GenericPerTensor);
}

TEST(Knowledge, CustomOps) {
  // npu_rms_norm: first listed in 1.11.0's custom list (development tip), absent from 1.5.0/1.8.1.
  EXPECT_FALSE(version("1.5.0-dev").is_custom("npu_rms_norm"));
  EXPECT_FALSE(version("1.8.1-dev").is_custom("npu_rms_norm"));
  EXPECT_TRUE(version("1.11.0-dev").is_custom("npu_rms_norm"));
  EXPECT_TRUE(version("2.15.0-dev").is_custom("npu_rms_norm"));
  EXPECT_TRUE(version("2.1.0").is_custom("torch_npu.npu_rms_norm"));
  EXPECT_TRUE(version("2.1.0").is_custom("npu::npu_rms_norm"));
  EXPECT_FALSE(version("2.1.0").is_custom("NpuLayerNorm"));  // does not exist in any version
  EXPECT_NE(kb().custom_schema("npu_rms_norm").find("Tensor gamma"), std::string_view::npos);
  EXPECT_FALSE(version("2.1.0").has_npu_kernel("aten::npu_rms_norm"));
}

TEST(Knowledge, DeprecatedOps) {
  const DeprecatedOp* d = kb().deprecated("npu_confusion_transpose");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->source, "npu-facts");
  d = kb().deprecated("torch_npu.npu_bmmV2");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->replacement, "torch.bmm and torch.view");
  EXPECT_EQ(d->source, "op-plugin:deprecated.yaml");
  for (const char* op : {"npu_dropout_with_add_softmax", "npu_silu", "npu_mish"})
    EXPECT_NE(kb().deprecated(op), nullptr) << op;
  ASSERT_NE(kb().deprecated("npu_min"), nullptr);  // listed as npu_min.dim
  EXPECT_EQ(kb().deprecated("npu_rms_norm"), nullptr);
}

TEST(Knowledge, AutocastAndFallbackLists) {
  EXPECT_EQ(version("2.1.0").autocast_policy("aten::conv2d"), "lower_precision_fp");
  EXPECT_EQ(version("2.15.0-dev").autocast_policy("mm"), "lower_precision_fp");
  EXPECT_EQ(version("2.1.0.post8").autocast_policy("binary_cross_entropy"), "banned");  // per torch line
  EXPECT_EQ(version("2.1.0").autocast_policy("binary_cross_entropy"), "banned");
  EXPECT_EQ(version("2.1.0").autocast_policy("aten::softmax.Dimname"), "fp32_set_opt_dtype");
  EXPECT_EQ(version("2.13.0").autocast_policy("aten::softmax.Dimname"), "");  // removed on master
  EXPECT_EQ(version("2.0.1").autocast_policy("aten::conv2d"), "");            // no data before 2.1
  EXPECT_TRUE(version("1.11.0").is_tocpu("_cholesky_helper"));
  EXPECT_FALSE(version("2.1.0-dev").is_tocpu("_cholesky_helper"));
  EXPECT_EQ(version("2.1.0").impl_of("aten::add.Tensor").substr(0, 10), "op-plugin:");
}

TEST(Knowledge, Provenance) {
  EXPECT_NE(kb().provenance().find("npu-ops-release"), std::string::npos);
  EXPECT_NE(kb().provenance().find("68 release wheels (tags)"), std::string::npos);
}

TEST(Knowledge, ParseSmallText) {
  Knowledge k = Knowledge::parse(
      "@file wheels.tsv\n# c\n1.0.0\t1.0.0\trelease\tv1\t\t\t\t\t1\t\n2.0.0-dev\t2.0.0\tdev-tip\tmaster\t\t\t\t\t2\t\n"
      "@file aten-ops.tsv\nfoo.Tensor\t1-2\nbar\t2\n"
      "@file dispatch.tsv\n# torch: 1.13 2.1\nbaz\t.I\t\n");
  ASSERT_EQ(k.versions().size(), 2u);
  EXPECT_TRUE(k.find("1.0")->has_npu_kernel("aten::foo"));
  EXPECT_FALSE(k.find("1.0")->has_npu_kernel("aten::bar"));
  EXPECT_TRUE(k.find("2.0.0")->has_npu_kernel("bar.default"));
  EXPECT_EQ(k.find("2.0.0")->version, "2.0.0-dev");
  EXPECT_EQ(k.dispatch().kind("aten::baz", 0, false), DispatchKind::Implicit);   // the nearest column that has it
}

TEST(Knowledge, MalformedTextGivesClearError) {
  auto message = [](std::string_view text) {
    try {
      Knowledge::parse(text);
    } catch (const KnowledgeError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string wheels = "@file wheels.tsv\n1.0.0\t1.0.0\trelease\tv1\t\t\t\t\t1\t\n";
  EXPECT_EQ(message(wheels + "@file aten-ops.tsv\n# x\nfoo\n"),
            "knowledge file aten-ops.tsv line 2: expected 2 tab-separated fields, got 1");
  EXPECT_EQ(message(wheels + "@file aten-ops.tsv\nfoo\t3\n"),
            "knowledge file aten-ops.tsv line 1: unknown list id '3' (wheels.tsv has 1-1)");
  EXPECT_EQ(message(wheels + "@file autocast.tsv\nfoo\tfp32\t3.0.0\n"),
            "knowledge file autocast.tsv line 1: unknown torch line '3.0.0' (not in wheels.tsv)");
  EXPECT_EQ(message("@file aten-ops.tsv\nfoo\t1\n"), "knowledge: wheels.tsv is missing (it defines the versions)");
  EXPECT_EQ(message("@file wheels.tsv\n1.0.0\t1.0.0\tnightly\tv1\t\t\t\t\t1\t\n"),
            "knowledge file wheels.tsv line 1: unknown kind 'nightly'");
  EXPECT_EQ(message("@file wheels.tsv\n1.0.0\t1.0.0\trelease\tv1\t\t\t\t\t5\t\n"),
            "knowledge file wheels.tsv line 1: list id '5' is not the next or a known one");
  EXPECT_EQ(message("garbage\n"), "knowledge text line 1: expected '@file <name>' before any content");
  EXPECT_EQ(message(wheels + "@file dispatch.tsv\n# torch: 1.13 2.1\nfoo\tIX\t\n"),
            "knowledge file dispatch.tsv line 2: expected an op and 2 codes of .IENB, got 'IX'");
  EXPECT_EQ(message(wheels + "@file dispatch.tsv\nfoo\tI\t\n"),
            "knowledge file dispatch.tsv line 1: data before the '# torch:' line");
}

// data/knowledge must be what tools/gen_knowledge.py makes of ../shared/data/npu-ops{,-release}.
TEST(Knowledge, GeneratedFilesUpToDate) {
  namespace fs = std::filesystem;
  fs::path input = fs::path(NPUD_SHARED_DIR) / "data" / "npu-ops";
  REQUIRE_FIXTURE(input);
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  fs::path src = NPUD_SOURCE_DIR;
  std::string cmd = "/usr/bin/python3 '" + (src / "tools" / "gen_knowledge.py").string() + "' '" + input.string() +
                    "' --out '" + (src / "data" / "knowledge").string() + "' --check";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

}  // namespace
}  // namespace npud
