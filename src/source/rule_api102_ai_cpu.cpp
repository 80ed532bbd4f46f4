// API102 api-on-ai-cpu: a call of a torch API that runs on AI CPU / the host for some inputs even
// though a kernel is listed (NPU-FACTS). See docs/rules/API102.md.
#include "knowledge/advice_texts.hpp"
#include "source/api_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

namespace npud::api_rules {

void report_host_api(TSNode n, const std::string& d, const ApiEntry* e, FileScan& fs) {
  if (!e->host_note.empty())
    fs.report("API102", Severity::Info, n, d + "(): " + e->host_note + " (NPU-FACTS)",
              advice("API102", "fix"));
}

}  // namespace npud::api_rules

#endif  // NPUD_HAVE_TREE_SITTER
