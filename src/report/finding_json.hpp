// The finding shape of every command's JSON (analyze, run, amp-check, diff, scan, cluster and
// `--format summary`; docs/json-schema.md "findings[]"): one writer, so the key set cannot drift.
#pragma once

#include <string_view>
#include <vector>

#include "model/finding.hpp"

namespace npud {

class JsonWriter;

// Before schema_version 2, scan and the rank summary also wrote "rule" and flat file/line/...
// keys: `deprecated_aliases` writes them after the finding's own keys, for one release.
enum class FindingAliases : bool { No, Yes };

// The finding's keys into an open JSON object (a caller may add its own after: cluster's "ranks").
void write_finding_fields(JsonWriter& w, const Finding& f, FindingAliases aliases = FindingAliases::No);
// `{finding}`
void write_finding(JsonWriter& w, const Finding& f, FindingAliases aliases = FindingAliases::No);
// `"key": [ {finding}, ... ]`
void write_findings(JsonWriter& w, std::string_view key, const std::vector<Finding>& findings,
                    FindingAliases aliases = FindingAliases::No);

}  // namespace npud
