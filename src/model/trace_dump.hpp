// A canonical text dump of a read Trace: what an importer made of its input, table by table
// (Perfetto's importer diff tests do the same with query results). Each table says its row
// count and a digest of every row's text, then shows its first rows in full: strings resolved,
// an op's stack, module and tensors inline. tests/unit/test_importer_dumps.cpp compares the dumps
// of one input per reader with tests/data/importer_dumps/, so a reader change that moves any
// field of any row shows up as a diff of that table, not as a changed finding somewhere.
#pragma once

#include <cstddef>
#include <ostream>

#include "model/trace.hpp"

namespace npud {

// rows: how many rows of each table to show (the digest covers all of them).
void dump_trace(std::ostream& os, const Trace& t, size_t rows = 12);

}  // namespace npud
