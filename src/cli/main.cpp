// npu-doctor: finds what slows or breaks PyTorch programs on Ascend NPUs.
#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/completion.hpp"
#include "cli/help_format.hpp"
#include "cli/launch.hpp"
#include "cli/output.hpp"
#include "cli/safe_stderr.hpp"
#include "ingest/isal_loader.hpp"
#include "util/text.hpp"

namespace {

// A first argument that is no option and no command: says so, with the closest command.
bool unknown_command(const CLI::App& app, std::string_view word) {
  if (word.empty() || word[0] == '-') return false;
  std::string best;
  size_t best_d = 3;   // suggest only close spellings
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == word) return false;
    size_t d = npud::edit_distance(word, sub->get_name());
    if (sub->get_name().starts_with(word)) d = 0;
    if (d < best_d) best_d = d, best = sub->get_name();
  }
  std::cerr << "npu-doctor: error: unknown command '" << word << "'"
            << (best.empty() ? std::string() : "; did you mean '" + best + "'?")
            << " (`npu-doctor --help` lists the commands)\n";
  return true;
}

constexpr const char* kShortUsage =
    "npu-doctor: finds what slows down or breaks a PyTorch program on Ascend NPUs, at your file:line.\n"
    "\n"
    "Usage: npu-doctor COMMAND [OPTIONS]\n"
    "  scan PATH                   static scan of Python sources (--diff shows the fixes)\n"
    "  run -- python3 train.py     run the program on any device and diagnose it\n"
    "  analyze PROFILE             a torch.profiler trace or torch_npu profiler folder\n"
    "  amp-check -- python3 X.py   where fp16/bf16 drifts from fp32\n"
    "  env                         torch / torch_npu / CANN / Python of this machine\n"
    "\n"
    "`npu-doctor docs quickstart` to begin; `npu-doctor --help` lists every command.\n";

}  // namespace

int main(int argc, char** argv) {
  npud::guard_standard_fds();
  npud::make_stderr_terminal_safe();
  CLI::App app{
      "npu-doctor: finds what slows or breaks PyTorch programs on Ascend NPUs (torch_npu), "
      "in profiles you have and in programs you run."};
  npud::wrap_help_to_terminal(app);   // first: the subcommands copy the app's formatter
  // CLI11's own default, set here because the copy the pinned-source build uses (HiGHS's
  // CLI11.hpp 2.5.0, cmake/BundledDeps.cmake) comments it out; subcommands inherit it.
  app.set_help_flag("-h,--help", "Print this help message and exit");
  // The build's optional parts too: a bug report then says what the binary can do.
  app.set_version_flag("-V,--version", [] {
    return fmt::format("npu-doctor {} (gzip: {}; scan: {})", NPUD_VERSION, npud::gzip_inflater_name(),
#ifdef NPUD_HAVE_TREE_SITTER
                       "built"
#else
                       "not built"
#endif
    );
  });
  app.require_subcommand(1);
  app.footer("Run `npu-doctor COMMAND --help` (or `npu-doctor help COMMAND`) for a command's options. Exit codes: 0 clean, "
             "1 findings at or above --fail-on, 2 bad input or usage.");

  int exit_code = npud::kExitClean;
  npud::add_analyze_command(app, exit_code);
  npud::add_run_command(app, exit_code);
  npud::add_amp_check_command(app, exit_code);
  npud::add_scan_command(app, exit_code);
  npud::add_diff_command(app, exit_code);
  npud::add_merge_command(app, exit_code);
  npud::add_env_command(app, exit_code);
  npud::add_compare_command(app, exit_code);
  npud::add_rules_command(app, exit_code);
  npud::add_docs_command(app, exit_code);
  npud::add_completion_command(app, exit_code);
  npud::name_subcommand_sections(app);

  // `npu-doctor help [COMMAND]` is `npu-doctor [COMMAND] --help`, as in git and cargo.
  std::vector<std::string> words(argv, argv + argc);
  if (words.size() == 1) {   // a newcomer's first try: the main commands, not a parse error
    std::cerr << kShortUsage;
    return npud::kExitBadInput;
  }
  if (words.size() > 1 && words[1] == "help") {
    words.erase(words.begin() + 1);
    words.push_back("--help");
  }
  if (words.size() > 1 && unknown_command(app, words[1])) return npud::kExitBadInput;
  if (npud::refuse_options_after_program(app, words)) return npud::kExitBadInput;
  std::vector<const char*> word_ptrs;
  for (const std::string& w : words) word_ptrs.push_back(w.c_str());
  try {
    app.parse(int(word_ptrs.size()), word_ptrs.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return npud::kExitBadInput;
  }
  // What `rules`, `docs` and `completion` print goes unchecked until here.
  if (!npud::stdout_written_or_report()) return npud::kExitBadInput;
  return exit_code;
}
