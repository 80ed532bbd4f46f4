// The API scan rules, one file each (rule_api101_no_npu_kernel.cpp, rule_api102_ai_cpu.cpp,
// docs/rules/API10N.md, tests/data/scan/api.py): calls of torch APIs whose aten ops
// data/api-aten-map.tsv lists. One walk (rule_api.cpp) finds each call's entry and hands it to
// API101, then, when API101 said nothing of it, to API102.
#pragma once
#ifdef NPUD_HAVE_TREE_SITTER

#include <string>

#include "source/rule_context.hpp"

namespace npud::api_rules {

// API101: the call n of the torch API d, whose entry is e; true when it reported it.
bool report_unsupported_api(TSNode n, const std::string& d, const ApiEntry* e, FileScan& fs);
// API102: the same call, when API101 did not report it.
void report_host_api(TSNode n, const std::string& d, const ApiEntry* e, FileScan& fs);

}  // namespace npud::api_rules

#endif  // NPUD_HAVE_TREE_SITTER
