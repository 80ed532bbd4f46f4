// The knowledge base against the real data (data/knowledge, generated from
// ../shared/data/npu-ops): facts checked here were grepped from the source lists.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "knowledge/knowledge.hpp"

namespace npud {
namespace {

const Knowledge& kb() { return Knowledge::builtin(); }

const KnowledgeVersion& version(std::string_view v) {
  const KnowledgeVersion* kv = kb().find(v);
  if (!kv) throw std::runtime_error("missing version " + std::string(v));
  return *kv;
}

TEST(Knowledge, VersionsOldestFirst) {
  const auto& vs = kb().versions();
  ASSERT_EQ(vs.size(), 19u);
  EXPECT_EQ(vs.front().version, "1.5.0");
  EXPECT_EQ(vs.back().version, "2.15.0");
  EXPECT_EQ(&kb().newest(), &vs.back());
  // Sizes from SOURCE.md's table (aten lines per version).
  EXPECT_EQ(version("2.1.0").aten.size(), 1072u);
  EXPECT_EQ(version("2.7.1").aten.size(), 1088u);
  EXPECT_EQ(version("1.5.0").aten.size(), 817u);
  EXPECT_EQ(version("2.13.0").custom.size(), 422u);
}

TEST(Knowledge, FindAcceptsCommonSpellings) {
  ASSERT_NE(kb().find("2.1.0"), nullptr);
  EXPECT_EQ(kb().find("2.1.0")->version, "2.1.0");
  EXPECT_EQ(kb().find("2.1")->version, "2.1.0");
  EXPECT_EQ(kb().find("v2.1.0")->version, "2.1.0");
  EXPECT_EQ(kb().find("2.1.0.post3")->version, "2.1.0");
  EXPECT_EQ(kb().find("2.7.1-26.1.0")->version, "2.7.1");
  EXPECT_EQ(kb().find("2.10")->version, "2.10.0");
  EXPECT_EQ(kb().find("2.1.0+cpu")->version, "2.1.0");
  EXPECT_EQ(kb().find("9.9.9"), nullptr);
  EXPECT_EQ(kb().find("2.1.5"), nullptr);
  EXPECT_EQ(kb().find("2"), nullptr);
  EXPECT_EQ(kb().find(""), nullptr);
  EXPECT_EQ(kb().find("banana"), nullptr);
}

TEST(Knowledge, IsinTensorTensorOutListedFrom210) {
  // grep -l isin.Tensor_Tensor_out shared/data/npu-ops/*.txt: 2.1.0 .. 2.15.0 (and 2.0.1's unsupported list).
  for (const char* v : {"1.5.0", "1.8.1", "1.11.0", "2.0.1"}) {
    EXPECT_FALSE(version(v).has_npu_kernel("isin.Tensor_Tensor_out")) << v;
    EXPECT_FALSE(version(v).has_npu_kernel("aten::isin.Tensor_Tensor")) << v;
  }
  for (const char* v : {"2.1.0", "2.2.0", "2.5.1", "2.7.1", "2.12.0", "2.15.0"}) {
    EXPECT_TRUE(version(v).has_npu_kernel("isin.Tensor_Tensor_out")) << v;
    EXPECT_TRUE(version(v).has_npu_kernel("aten::isin.Tensor_Tensor")) << v;
  }
  // No overload (Kineto spelling): any listed overload counts; 1.11.0 lists isin.Tensor_Scalar.
  EXPECT_TRUE(version("1.11.0").has_npu_kernel("aten::isin"));
  EXPECT_FALSE(version("1.8.1").has_npu_kernel("aten::isin"));
  EXPECT_TRUE(version("2.0.1").is_unsupported("aten::isin.Tensor_Tensor_out"));
  EXPECT_FALSE(version("2.1.0").is_unsupported("aten::isin.Tensor_Tensor_out"));
}

TEST(Knowledge, NameSpellings) {
  const KnowledgeVersion& v = version("2.1.0");
  EXPECT_TRUE(v.has_npu_kernel("aten::add.Tensor"));
  EXPECT_TRUE(v.has_npu_kernel("aten::add"));
  EXPECT_TRUE(v.has_npu_kernel("aten::add_"));         // in-place variants are their own names
  EXPECT_TRUE(v.has_npu_kernel("add_.Tensor"));
  EXPECT_TRUE(v.has_npu_kernel("aten.add.Tensor"));
  EXPECT_TRUE(v.has_npu_kernel("torch.ops.aten.addmm.default"));  // default overload = "addmm"
  EXPECT_FALSE(v.has_npu_kernel("aten::add.NoSuchOverload"));
  EXPECT_FALSE(v.has_npu_kernel("aten::linear"));       // composite: never listed
  // 2.6+ lists the structured op only as gelu.out: exact "gelu" is absent, Kineto's "aten::gelu" matches.
  EXPECT_TRUE(version("2.5.1").has_npu_kernel("aten::gelu.default"));
  EXPECT_FALSE(version("2.7.1").has_npu_kernel("aten::gelu.default"));
  EXPECT_TRUE(version("2.7.1").has_npu_kernel("aten::gelu"));
}

TEST(Knowledge, CompositeOps) {
  EXPECT_TRUE(kb().is_composite("linear"));
  EXPECT_TRUE(kb().is_composite("aten::linear"));
  EXPECT_TRUE(kb().is_composite("aten::layer_norm"));
  EXPECT_TRUE(kb().is_composite("aten::softmax"));      // softmax.int is implicit
  EXPECT_EQ(kb().composite_kind("aten::linear"), "implicit");
  EXPECT_FALSE(kb().is_composite("aten::isin"));        // isin overloads have backend kernels
  EXPECT_FALSE(kb().is_composite("aten::_softmax"));
  EXPECT_EQ(kb().composite_kind("aten::add.Scalar"), "explicit");
  EXPECT_FALSE(kb().is_composite("aten::add.Scalar"));
  EXPECT_EQ(kb().composite_kind("aten::no_such_op"), "");
}

TEST(Knowledge, CustomOps) {
  // npu_rms_norm: first listed in 1.11.0's custom list (development tip), absent from 1.5.0/1.8.1.
  EXPECT_FALSE(version("1.5.0").is_custom("npu_rms_norm"));
  EXPECT_FALSE(version("1.8.1").is_custom("npu_rms_norm"));
  for (const auto& v : kb().versions()) {
    if (v.version == "1.5.0" || v.version == "1.8.1") continue;
    EXPECT_TRUE(v.is_custom("npu_rms_norm")) << v.version;
  }
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
  EXPECT_EQ(version("2.15.0").autocast_policy("mm"), "lower_precision_fp");
  EXPECT_EQ(version("2.1.0").autocast_policy("binary_cross_entropy"), "banned");
  EXPECT_EQ(version("2.1.0").autocast_policy("aten::softmax.Dimname"), "fp32_set_opt_dtype");
  EXPECT_EQ(version("2.13.0").autocast_policy("aten::softmax.Dimname"), "");  // removed on master
  EXPECT_EQ(version("2.0.1").autocast_policy("aten::conv2d"), "");            // no data before 2.1
  EXPECT_TRUE(version("1.11.0").is_tocpu("_cholesky_helper"));
  EXPECT_FALSE(version("2.1.0").is_tocpu("_cholesky_helper"));
  EXPECT_EQ(version("2.1.0").impl_of("aten::add.Tensor").substr(0, 10), "op-plugin:");
}

TEST(Knowledge, CompatAndProvenance) {
  const auto& c = kb().compat();
  ASSERT_EQ(c.size(), kb().versions().size());
  EXPECT_EQ(c[4].torch_npu, "2.1.0");
  EXPECT_EQ(c[4].torch, "2.1.0");
  EXPECT_EQ(c[4].torch_npu_ref, "v2.1.0");
  EXPECT_EQ(c[4].op_plugin_commit, "c12b6362e2d4");
  EXPECT_EQ(c.back().torch_npu_ref, "master");
  EXPECT_TRUE(c[4].cann.empty());  // the data states no CANN versions: nothing invented
  EXPECT_NE(kb().provenance().find("DEVELOPMENT-BRANCH TIPS"), std::string::npos);
}

TEST(Knowledge, ParseSmallText) {
  Knowledge k = Knowledge::parse(
      "@file compat.tsv\n# c\n1.0.0\t1.0.0\t\t\t\t\t\n2.0.0\t2.0.0\t\t\t\t\t\n"
      "@file aten-ops.tsv\nfoo.Tensor\t1.0.0-2.0.0\nbar\t2.0.0\n"
      "@file composite.tsv\nbaz\timplicit\n");
  ASSERT_EQ(k.versions().size(), 2u);
  EXPECT_TRUE(k.find("1.0")->has_npu_kernel("aten::foo"));
  EXPECT_FALSE(k.find("1.0")->has_npu_kernel("aten::bar"));
  EXPECT_TRUE(k.find("2.0.0")->has_npu_kernel("bar.default"));
  EXPECT_TRUE(k.is_composite("aten::baz"));
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
  const std::string compat = "@file compat.tsv\n1.0.0\t1.0.0\t\t\t\t\t\n";
  EXPECT_EQ(message(compat + "@file aten-ops.tsv\n# x\nfoo\n"),
            "knowledge file aten-ops.tsv line 2: expected 2 tab-separated fields, got 1");
  EXPECT_EQ(message(compat + "@file aten-ops.tsv\nfoo\t3.0.0\n"),
            "knowledge file aten-ops.tsv line 1: unknown version '3.0.0' (not in compat.tsv)");
  EXPECT_EQ(message("@file aten-ops.tsv\nfoo\t1.0.0\n"),
            "knowledge: compat.tsv is missing (it defines the versions)");
  EXPECT_EQ(message("garbage\n"), "knowledge text line 1: expected '@file <name>' before any content");
  EXPECT_EQ(message(compat + "@file composite.tsv\nfoo\tsometimes\n"),
            "knowledge file composite.tsv line 1: unknown composite kind 'sometimes'");
}

// data/knowledge must be what tools/gen_knowledge.py makes of ../shared/data/npu-ops.
TEST(Knowledge, GeneratedFilesUpToDate) {
  namespace fs = std::filesystem;
  fs::path input = fs::path(NPUD_SHARED_DIR) / "data" / "npu-ops";
  if (!fs::exists(input)) GTEST_SKIP() << "no " << input << ": cannot check data/knowledge";
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  fs::path src = NPUD_SOURCE_DIR;
  std::string cmd = "/usr/bin/python3 '" + (src / "tools" / "gen_knowledge.py").string() + "' '" + input.string() +
                    "' --out '" + (src / "data" / "knowledge").string() + "' --check";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

}  // namespace
}  // namespace npud
