#include "cli/output.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>
#include <iostream>

#include "util/atomic_file.hpp"

namespace npud {

std::vector<std::string_view> formats_of_extension(std::string_view path) {
  std::string name(path.substr(path.rfind('/') == path.npos ? 0 : path.rfind('/') + 1));
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (name.ends_with(".html") || name.ends_with(".htm")) return {"html"};
  if (name.ends_with(".sarif") || name.ends_with(".sarif.json")) return {"sarif"};
  if (name.ends_with(".json")) return {"json", "sarif", "summary"};
  if (name.ends_with(".txt")) return {"text", "github"};
  return {};
}

CLI::Option* add_output_option(CLI::App& cmd, std::string& path, std::string* format) {
  CLI::Option* out = cmd.add_option("-o,--output", path,
                                    format ? "write the report to FILE instead of stdout (atomically; - is stdout); "
                                             "without --format, a .html/.json/.sarif/.txt FILE names the format"
                                           : "write the report to FILE instead of stdout (atomically; - is stdout)")
                         ->transform([](const std::string& value) { return value == "-" ? std::string() : value; });
  if (!format) return out;
  CLI::Option* format_option = cmd.get_option("--format");
  cmd.parse_complete_callback([&path, format, format_option] {
    std::vector<std::string_view> allowed = formats_of_extension(path);
    if (allowed.empty()) return;
    // Only formats the command writes: its --format check says which.
    auto writes = [&](std::string_view f) {
      std::string s(f);
      try {
        return format_option->get_validator()->operator()(s).empty();
      } catch (const CLI::OptionNotFound&) {   // no check: the command validates its format itself
        return true;
      }
    };
    if (format_option->count() == 0) {
      if (writes(allowed.front())) *format = allowed.front();
      return;
    }
    // A contradiction only where the command writes what the extension names (env writes no HTML).
    if (writes(allowed.front()) && std::find(allowed.begin(), allowed.end(), *format) == allowed.end())
      throw CLI::ValidationError("-o", fmt::format("{} names {} output, but --format is {}: drop --format, or name the "
                                                   "file for {}", path, allowed.front(), *format, *format));
  });
  return out;
}

CLI::Option* add_project_root_option(CLI::App& cmd, std::string& dir) {
  return cmd.add_option("--project-root", dir,
                        "sarif and github formats: name files relative to DIR, the repository's root for code scanning "
                        "(default: the nearest folder above the working directory with a .git, else the working "
                        "directory)")
      ->check(CLI::ExistingDirectory);
}

bool output_writable_or_report(const std::string& path) {
  if (path.empty()) return true;
  try {
    AtomicFile(path).check_writable();
    return true;
  } catch (const std::exception& e) {
    std::cerr << "npu-doctor: error: -o: " << e.what() << "\n";
    return false;
  }
}

bool emit_report(const std::string& path, bool want_color,
                 const std::function<void(std::ostream&, bool color)>& render, bool say_where) {
  try {
    if (path.empty()) {
      render(std::cout, want_color && ::isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
      std::cout.flush();
    } else {
      AtomicFile out(path);
      render(out.stream(), false);
      out.commit();
      if (say_where) std::cerr << "npu-doctor: report written to " << path << "\n";
    }
    return true;
  } catch (const std::exception& e) {
    std::cerr << "npu-doctor: error: " << e.what() << "\n";
    return false;
  }
}

}  // namespace npud
