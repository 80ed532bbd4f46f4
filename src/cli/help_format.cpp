#include "cli/help_format.hpp"

#include <unistd.h>

#include <memory>

#include "util/terminal.hpp"

namespace npud {

namespace {

constexpr size_t kHelpWidthOffTerminal = 80;

// Text with its trailing newlines removed (CLI11's pieces end in one).
std::string_view without_final_newlines(std::string_view s) {
  while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return s;
}

}  // namespace

WrappingFormatter::WrappingFormatter(size_t width) : width_(width) {
  column_width(width >= 60 ? 30 : width / 3);
}

std::string WrappingFormatter::row(const std::string& left, const std::string& description) const {
  std::string out = "  " + left;
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
  return wrap_text(without_final_newlines(base), width_, 0, 0) + '\n';
}

std::string WrappingFormatter::make_footer(const CLI::App* app) const {
  std::string base = CLI::Formatter::make_footer(app);
  if (base.empty()) return base;
  return wrap_text(without_final_newlines(base), width_, 0, 0) + '\n';
}

std::string WrappingFormatter::make_usage(const CLI::App* app, std::string name) const {
  return wrap_text(without_final_newlines(CLI::Formatter::make_usage(app, std::move(name))), width_, 0, 7) + '\n';
}

void wrap_help_to_terminal(CLI::App& app) {
  app.formatter(std::make_shared<WrappingFormatter>(terminal_width(STDOUT_FILENO, kHelpWidthOffTerminal)));
}

}  // namespace npud
