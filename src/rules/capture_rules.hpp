// Rules that need what only a capture records (tensor ids, storage identity, strides of
// every input, per-step shapes): they find nothing on traces without that data.
#pragma once

#include "rules/rule.hpp"

namespace npud {

const Rule& contig002_rule();     // noncontiguous-input
const Rule& dynshape001_rule();   // dynamic-shapes

}  // namespace npud
