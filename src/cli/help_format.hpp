// --help that fits the terminal: CLI11 2.1 prints each description on one line whatever its
// length (12 of 20 `--help` lines were over 80 columns); this formatter wraps descriptions,
// footers and usage lines to the width of the terminal on stdout (cli/terminal.hpp: $COLUMNS,
// the window, else 80). It also gives the same help whichever CLI11 the build took (Debian's
// 2.1, or the pinned 2.5 of the release wheels, cmake/BundledDeps.cmake, whose section names,
// usage line and paragraph wrapping differ).
#pragma once

#include <cstddef>
#include <string>

#include <CLI/CLI.hpp>

namespace npud {

class WrappingFormatter : public CLI::Formatter {
 public:
  explicit WrappingFormatter(size_t width);

  std::string make_option(const CLI::Option* opt, bool is_positional) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_description(const CLI::App* app) const override;
  std::string make_footer(const CLI::App* app) const override;
  std::string make_usage(const CLI::App* app, std::string name) const override;
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override;

 private:
  // "  LEFT   description...", the description wrapped in the right column (under LEFT when
  // LEFT does not leave room for it).
  std::string row(const std::string& left, const std::string& description) const;
  size_t width_;
};

// Gives `app` (before its subcommands are added: they copy it) a WrappingFormatter for the
// width of the terminal on stdout, 80 columns when stdout is no terminal, and CLI11 2.1's
// section names for options and positionals.
void wrap_help_to_terminal(CLI::App& app);
// CLI11 2.1's "Subcommands" section name for every subcommand of `app` (after they are added).
void name_subcommand_sections(CLI::App& app);

}  // namespace npud
