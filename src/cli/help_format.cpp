#include "cli/help_format.hpp"

#include <unistd.h>

#include <memory>

#include "util/terminal.hpp"

namespace npud {

namespace {

constexpr size_t kHelpWidthOffTerminal = 80;

// Text without the newlines CLI11 puts around its pieces (2.1 ends them in one; 2.5 also starts
// footers and usage lines with one) and without trailing blanks.
std::string_view trimmed_piece(std::string_view s) {
  while (!s.empty() && (s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  return s;
}

// CLI11 2.5 re-wraps descriptions and footers as paragraphs of 80 columns (2.1 has no such
// setting): they come wrapped to the terminal from this formatter already.
template <typename F>
void no_paragraph_rewrap(F& f) {
  if constexpr (requires { f.description_paragraph_width(size_t{}); }) {
    f.description_paragraph_width(size_t(1) << 20);
    f.footer_paragraph_width(size_t(1) << 20);
  }
}

}  // namespace

WrappingFormatter::WrappingFormatter(size_t width) : width_(width) {
  column_width(width >= 60 ? 30 : width / 3);
  label("positionals", "Positionals");   // CLI11 2.5's section name; 2.1 names it so itself
  no_paragraph_rewrap(*this);
}

std::string WrappingFormatter::row(const std::string& left, const std::string& description) const {
  std::string out = "  " + std::string(trimmed_piece(left));   // CLI11 2.5 ends option types with a blank
  if (!description.empty()) {
    if (out.size() + 1 > column_width_) {
      out += '\n';
      out.append(column_width_, ' ');
    } else {
      out.append(column_width_ - out.size(), ' ');
    }
    out += wrap_text(description, width_, column_width_, column_width_);
  }
  return out + '\n';
}

std::string WrappingFormatter::make_option(const CLI::Option* opt, bool is_positional) const {
  return row(make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt));
}

std::string WrappingFormatter::make_subcommand(const CLI::App* sub) const {
  return row(sub->get_display_name(true), sub->get_description());
}

std::string WrappingFormatter::make_description(const CLI::App* app) const {
  std::string base = CLI::Formatter::make_description(app);
  if (base.empty()) return base;
  return wrap_text(trimmed_piece(base), width_, 0, 0) + '\n';
}

std::string WrappingFormatter::make_footer(const CLI::App* app) const {
  std::string base = CLI::Formatter::make_footer(app);
  if (base.empty()) return base;
  return wrap_text(trimmed_piece(base), width_, 0, 0) + '\n';
}

// "Usage: NAME [OPTIONS] ..." as CLI11 2.1 writes it; CLI11 2.5 starts with a newline, leaves
// "Usage:" out when given the name and writes "[options]".
std::string WrappingFormatter::make_usage(const CLI::App* app, std::string name) const {
  std::string usage(trimmed_piece(CLI::Formatter::make_usage(app, std::move(name))));
  if (!usage.starts_with("Usage:")) usage = "Usage: " + usage;
  if (size_t at = usage.find(" [options]"); at != std::string::npos) usage.replace(at, 10, " [OPTIONS]");
  return wrap_text(usage, width_, 0, 7) + '\n';
}

// CLI11 2.1's layout, whichever CLI11 this is: the pinned 2.5 (HiGHS's copy) leaves the
// positionals out and re-wraps paragraphs.
std::string WrappingFormatter::make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const {
  if (mode == CLI::AppFormatMode::Sub) return CLI::Formatter::make_help(app, std::move(name), mode);
  return make_description(app) + make_usage(app, std::move(name)) + make_positionals(app) + make_groups(app, mode) +
         make_subcommands(app, mode) + '\n' + make_footer(app);
}

void wrap_help_to_terminal(CLI::App& app) {
  app.formatter(std::make_shared<WrappingFormatter>(terminal_width(STDOUT_FILENO, kHelpWidthOffTerminal)));
  app.option_defaults()->group("Options");   // CLI11 2.5's default is "options"
}

void name_subcommand_sections(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    sub->group("Subcommands");
    // CLI11 2.5 gives a subcommand's inherited -h,--help the group "options" before it copies
    // the parent's option defaults.
    for (CLI::Option* opt : sub->get_options())
      if (opt->get_group() == "options") opt->group("Options");
  }
}

}  // namespace npud
