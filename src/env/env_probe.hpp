// `npu-doctor env`: what is installed (Python, torch, torch_npu, CANN, driver) and whether
// it fits together according to the knowledge base's wheel table (wheels.tsv). See docs/env.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace npud {

class Knowledge;

// What `python -c <probe>` reported. The probe prints one JSON object; a missing package
// is not an error of the probe, it leaves the version empty and says why in *_error.
struct PythonProbe {
  std::string command;          // the python binary that was run
  bool ran = false;             // false: could not start, timed out, or printed no JSON
  std::string error;            // why it did not run
  std::string python_version;   // "3.11.2"
  std::string executable;       // sys.executable
  std::string torch;            // "2.1.0+cpu", empty when not importable
  std::string torch_error;
  std::string torch_npu;        // "2.1.0.post3", empty when not importable
  std::string torch_npu_error;
  std::string torch_npu_wheel;  // installed distribution's version (importlib.metadata), import or not
};

// A version read from an install tree's files.
struct InstallInfo {
  std::string root;             // directory looked at
  bool found = false;
  std::string version;          // "8.0.RC2"
  std::string source;           // file the version came from
  std::vector<std::string> looked_in;  // files tried, for the "not found" message
};

struct EnvCheck {
  enum class Level { Ok, Info, Warning, Mismatch };
  Level level = Level::Ok;
  std::string component;        // "torch_npu", "torch", "cann", "driver", "python"
  std::string message;
  std::string advice;           // what to install, "" when nothing to do
};
std::string_view to_string(EnvCheck::Level l);

struct EnvReport {
  PythonProbe python;
  InstallInfo cann;
  InstallInfo driver;
  std::vector<EnvCheck> checks;
  std::string torch_npu_version; // knowledge-base name analyses use here ("2.1.0.post8"), "" if none
  bool consistent() const;      // no Mismatch
};

// The Python source the probe runs (prints one JSON object on stdout).
const char* python_probe_source();
// Runs `python -c <probe>` with a timeout; never throws.
PythonProbe probe_python(const std::string& python, int timeout_s);
// Parses the probe's stdout into `out` (sets ran/error). Exposed for tests.
void parse_probe_output(const std::string& json, PythonProbe& out);

// CANN toolkit under `root`: <arch>-linux/ascend_toolkit_install.info (version=...),
// version.cfg, runtime/version.info and compiler/version.info (Version=...).
InstallInfo read_cann(const std::string& root);

// The architecture this binary was built for, and so runs on, as CANN names its per-architecture
// folders (<root>/<arch>-linux).
constexpr std::string_view host_arch() {
#if defined(__aarch64__)
  return "aarch64";
#elif defined(__x86_64__)
  return "x86_64";
#else
  return "unknown";
#endif
}
// Driver: <root>/version.info (Version=...).
InstallInfo read_driver(const std::string& root);
// The CANN root to use when none is given: $ASCEND_TOOLKIT_HOME, $ASCEND_HOME_PATH,
// else /usr/local/Ascend/ascend-toolkit/latest.
std::string default_cann_home();

// Leading "X.Y.Z" of a version string ("2.1.0.post3" -> "2.1.0", "2.1.0+cpu" -> "2.1.0").
std::string base_version(std::string_view v);

// Checks the findings against the compatibility table and fills report.checks.
void check_env(EnvReport& report, const Knowledge& kb);

}  // namespace npud
