// A lever is checked against the model it is given for (issue 45): a row "[if FLAG] lever" of
// data/advice holds only where the captured model's class or config has FLAG.
#include <gtest/gtest.h>

#include "analysis/model_facts.hpp"
#include "rules/library_findings.hpp"

namespace npud::test {
namespace {

// A CONTIG001 finding at transformers' SDPA output copy, in module `module`.
Finding output_copy(std::string module) {
  Finding f;
  f.rule = "CONTIG001";
  f.severity = Severity::Info;
  f.message = "aten::clone copies a strided tensor";
  f.location.file = "train.py";
  f.location.line = 14;
  f.location.module = std::move(module);
  f.location.library = {"transformers", "5.17.0", "integrations/sdpa_attention.py", 168, "sdpa_attention_forward", ""};
  return f;
}

Trace with_model(std::string_view path, std::string_view flash) {
  Trace t;
  t.set_env("models", path);
  t.set_env(std::string("model:") + std::string(path) + ":class", "transformers.models.t5.modeling_t5.T5ForConditionalGeneration");
  if (!flash.empty()) t.set_env(std::string("model:") + std::string(path) + ":_supports_flash_attn", flash);
  t.set_env(std::string("model:") + std::string(path) + ":config", "d_model,dense_act_fn,num_heads");
  return t;
}

TEST(LibraryLevers, ALeverTheModelLacksIsNotOffered) {
  std::vector<Finding> f{output_copy("model.encoder.block.0.layer.0.SelfAttention")};
  apply_library_advice(f, with_model("model", "0"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].fix.find("flash_attention_2"), std::string::npos) << f[0].fix;
  bool said = false;
  for (const std::string& n : f[0].notes)
    said = said || (n.find("not offered") != std::string::npos && n.find("T5ForConditionalGeneration") != std::string::npos);
  EXPECT_TRUE(said);
}

TEST(LibraryLevers, ALeverTheModelHasOrAnUnknownModelKeepsIt) {
  for (const Trace& t : {with_model("model", "1"), with_model("other", "0"), Trace{}}) {
    std::vector<Finding> f{output_copy("model.encoder.block.0.layer.0.SelfAttention")};
    apply_library_advice(f, t);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_NE(f[0].fix.find("flash_attention_2"), std::string::npos) << f[0].fix;
  }
}

TEST(ModelFacts, ConditionsReadFlagsAndConfigFields) {
  Trace t = with_model("model", "0");
  ModelFacts m(t);
  EXPECT_EQ(m.model_of("model.encoder.block.0"), "model");
  EXPECT_EQ(m.model_of("model"), "model");
  EXPECT_EQ(m.model_of("modelx.a"), "");
  EXPECT_EQ(m.model_of(""), "model");   // the only model
  EXPECT_EQ(m.holds("_supports_flash_attn|_supports_flash_attn_2", "model"), FactHolds::No);
  EXPECT_EQ(m.holds("_supports_sdpa", "model"), FactHolds::Unknown);   // not recorded
  EXPECT_EQ(m.holds("config.dense_act_fn", "model"), FactHolds::Yes);
  EXPECT_EQ(m.holds("config.hidden_act", "model"), FactHolds::No);
  EXPECT_EQ(m.holds("config.hidden_act|config.dense_act_fn", "model"), FactHolds::Yes);
  EXPECT_EQ(m.holds("config.hidden_act", ""), FactHolds::Unknown);
}

}  // namespace
}  // namespace npud::test
