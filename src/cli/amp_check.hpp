// Pieces of `npu-doctor amp-check` that tests check directly.
#pragma once

#include <string>
#include <string_view>

namespace npud {

struct KnowledgeVersion;

// Knowledge-base autocast policy -> the shim's list policy: "lower", "fp32", "promote", or ""
// (not listed: "banned").
std::string_view amp_list_policy(std::string_view knowledge_policy);
// The NPUD_AMP_LISTS file (docs/formats/amp.md): "aten::<op>\t<policy>" lines, sorted.
std::string amp_lists_text(const KnowledgeVersion& v);

}  // namespace npud
