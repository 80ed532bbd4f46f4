// The amp-check rules (docs/amp-check.md): they read the numeric records, gradient
// histograms and GradScaler/autocast calls of an `npu-doctor amp-check` capture
// (docs/formats/amp.md) and find nothing on any other trace. AMP101 is a scan rule
// (src/source/rule_amp.cpp), not one of these.
#pragma once

#include "rules/rule.hpp"

namespace npud {

const Rule& amp001_rule();   // amp-drift-start
const Rule& amp002_rule();   // amp-keep-fp32
const Rule& amp003_rule();   // amp-loss-scale
const Rule& amp004_rule();   // amp-gradscaler-missing
const Rule& amp005_rule();   // amp-gradscaler-misuse
const Rule& amp006_rule();   // amp-banned-op

}  // namespace npud
