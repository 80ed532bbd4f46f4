// Rules that need what only a capture records (tensor ids, storage identity, strides of
// every input, per-step shapes): they find nothing on traces without that data.
#pragma once

#include <cstdint>
#include <vector>

#include "rules/rule.hpp"

namespace npud {

class Trace;
class TraceIndex;
struct Op;

const Rule& contig002_rule();     // noncontiguous-input
const Rule& dynshape001_rule();   // dynamic-shapes

// Flags by op index (empty when there is none): the copies PyTorch makes inside a matmul
// call from a strided input (matmul/linear: clone + _unsafe_view), which CONTIG002 reports
// as the call's implicit input; CONTIG001 leaves them to it (one problem, one finding).
std::vector<uint8_t> copies_inside_matmul_calls(const Trace& t, const TraceIndex& index);

// How the layout rules (CONTIG001, CONTIG002) count an op of the backward pass. Its copy mirrors
// a layout choice of the forward code: with its forward op known (torch >= 2.1 captures) it
// carries the forward line and adds to that line's forward finding, never making one of its
// own; with it unknown (torch 1.x) or for the writes into .grad it carries the
// `loss.backward()` line, which names nothing to change, and is not counted.
enum class BackwardUse { Own, JoinForward, Skip };
BackwardUse backward_use(const Trace& t, const Op& op);

}  // namespace npud
