#include "cli/output.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "util/atomic_file.hpp"

namespace npud {

CLI::Option* add_output_option(CLI::App& cmd, std::string& path) {
  return cmd.add_option("-o,--output", path, "write the report to FILE instead of stdout (atomically; - is stdout)")
      ->transform([](const std::string& value) { return value == "-" ? std::string() : value; });
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
                 const std::function<void(std::ostream&, bool color)>& render) {
  try {
    if (path.empty()) {
      render(std::cout, want_color && ::isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
      std::cout.flush();
    } else {
      AtomicFile out(path);
      render(out.stream(), false);
      out.commit();
    }
    return true;
  } catch (const std::exception& e) {
    std::cerr << "npu-doctor: error: " << e.what() << "\n";
    return false;
  }
}

}  // namespace npud
