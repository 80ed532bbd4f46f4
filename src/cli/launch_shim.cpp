// See launch_shim.hpp: finding the capture shim's Python folder, the link to it, and the
// Python options that hide it.
#include "cli/launch_shim.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/python_options.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;

bool has_shim(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kBootstrap, ec);
}

// The folders of <prefix>/lib/python3.*/{site,dist}-packages: where pip puts the npu_doctor
// package of a wheel whose binary it put in <prefix>/bin (a venv, --user, a system prefix).
std::vector<fs::path> pip_package_dirs(const fs::path& prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const char* lib : {"lib", "lib64"}) {
    fs::directory_iterator it(prefix / lib, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name.rfind("python3", 0) != 0) continue;
      for (const char* sub : {"site-packages", "dist-packages"}) out.push_back(it->path() / sub);
    }
    if (!out.empty()) break;
  }
  return out;
}

}  // namespace

std::string find_python_dir(std::string& tried, const char* source_python_dir) {
  if (const char* env = std::getenv("NPUD_PYTHON_DIR"); env && *env) {
    tried = env;
    return has_shim(env) ? fs::absolute(env).string() : std::string();
  }
  std::vector<fs::path> candidates;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path prefix = exe.parent_path().parent_path();
    candidates.push_back(prefix / "share" / "npu-doctor" / "python");
    for (auto& dir : pip_package_dirs(prefix)) candidates.push_back(std::move(dir));
    // A binary in a build folder directly under a checkout (build/npu-doctor, also when that
    // folder is a pip build's): the checkout's python/.
    candidates.push_back(prefix / "python");
  }
  if (source_python_dir) candidates.emplace_back(source_python_dir);
  for (const auto& c : candidates) {
    tried += (tried.empty() ? "" : ", ") + c.string();
    if (has_shim(c)) return fs::absolute(c).string();
  }
  return {};
}

std::string python_flag_hiding_the_shim(const std::vector<std::string>& program) {
  if (program.empty() || fs::path(program[0]).filename().string().rfind("python", 0) != 0) return {};
  namespace po = python_options;  // the shim's list too (python/npu_doctor/_interpreter.py)
  for (size_t i = 1; i < program.size(); ++i) {
    const std::string& a = program[i];
    if (a == "--" || a.size() < 2 || a[0] != '-') break;  // the script or `-`
    if (a[1] == '-') {                                     // a long option, maybe with a value
      if (std::find(po::kLongWithValue.begin(), po::kLongWithValue.end(), a) != po::kLongWithValue.end()) ++i;
      continue;
    }
    for (size_t k = 1; k < a.size(); ++k) {                // a cluster of flags: -sE, -uW ignore
      if (po::kShortProgram.find(a[k]) != std::string_view::npos) return {};  // the program follows
      if (a[k] == 'E' || a[k] == 'I') return a;
      if (po::kShortWithValue.find(a[k]) != std::string_view::npos) {
        if (k + 1 == a.size()) ++i;                        // its value is the next word
        break;                                             // else the rest of this one
      }
    }
  }
  return {};
}

ShimLink::~ShimLink() {
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);   // removes the link, never what it leads to
}

std::string ShimLink::make(const std::string& python_dir) {
  for (std::string base : {std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : ""), std::string("/tmp")}) {
    if (base.empty() || base.find(':') != std::string::npos) continue;
    std::string tmpl = (fs::path(base) / "npu-doctor-shim-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) continue;
    dir_ = tmpl;
    std::error_code ec;
    fs::create_directory_symlink(fs::path(python_dir) / "npu_doctor", fs::path(dir_) / "npu_doctor", ec);
    if (!ec) return dir_;
  }
  std::cerr << fmt::format("npu-doctor: error: the capture shim's folder {} holds ':', which splits PYTHONPATH, "
                           "and no link to it could be made in $TMPDIR or /tmp: install npu-doctor under a path "
                           "without ':' or set NPUD_PYTHON_DIR to a copy of the npu_doctor package's parent folder "
                           "there\n", python_dir);
  return {};
}

}  // namespace npud
