#include "env/env_probe.hpp"
#include "util/text.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <simdjson.h>

#include "knowledge/knowledge.hpp"
#include "util/directory.hpp"

namespace npud {

namespace fs = std::filesystem;

std::string_view to_string(EnvCheck::Level l) {
  switch (l) {
    case EnvCheck::Level::Ok: return "ok";
    case EnvCheck::Level::Info: return "info";
    case EnvCheck::Level::Warning: return "warning";
    case EnvCheck::Level::Mismatch: return "mismatch";
  }
  return "?";
}

bool EnvReport::consistent() const {
  for (const auto& c : checks)
    if (c.level == EnvCheck::Level::Mismatch) return false;
  return true;
}

const char* python_probe_source() {
  // Import errors are reported, never raised: a machine without torch_npu is a normal case.
  return R"PY(import json, platform, sys
r = {"python": platform.python_version(), "executable": sys.executable}
try:
    import torch
    r["torch"] = str(torch.__version__)
except BaseException as e:
    r["torch_error"] = "%s: %s" % (type(e).__name__, e)
try:
    import torch_npu
    r["torch_npu"] = str(getattr(torch_npu, "__version__", ""))
except BaseException as e:
    r["torch_npu_error"] = "%s: %s" % (type(e).__name__, e)
try:  # the installed wheel, even where importing it fails (no CANN, no NPU yet)
    from importlib import metadata
    r["torch_npu_wheel"] = metadata.version("torch_npu")
except BaseException:
    pass
sys.stdout.write(json.dumps(r) + "\n")
)PY";
}

void parse_probe_output(const std::string& text, PythonProbe& out) {
  // The probe's JSON is its last non-empty line: imports may print banners first.
  std::string line;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.find('{') != std::string::npos) line = l;
  if (line.empty()) {
    out.ran = false;
    out.error = "the probe printed no JSON";
    return;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(line).get(doc) || !doc.is_object()) {
    out.ran = false;
    out.error = "the probe printed invalid JSON";
    return;
  }
  auto get = [&](const char* key) -> std::string {
    std::string_view v;
    if (doc[key].get_string().get(v)) return {};
    return std::string(v);
  };
  out.ran = true;
  out.python_version = get("python");
  out.executable = get("executable");
  out.torch = get("torch");
  out.torch_error = get("torch_error");
  out.torch_npu = get("torch_npu");
  out.torch_npu_error = get("torch_npu_error");
  out.torch_npu_wheel = get("torch_npu_wheel");
}

PythonProbe probe_python(const std::string& python, int timeout_s) {
  PythonProbe p;
  p.command = python;
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) {
    p.error = fmt::format("pipe: {}", std::strerror(errno));
    return p;
  }
  pid_t pid = fork();
  if (pid < 0) {
    p.error = fmt::format("fork: {}", std::strerror(errno));
    close(pipefd[0]);
    close(pipefd[1]);
    return p;
  }
  if (pid == 0) {
    setpgid(0, 0);   // its own process group: a time-out kills whatever it started too
    dup2(pipefd[1], STDOUT_FILENO);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDERR_FILENO);
    const char* argv[] = {python.c_str(), "-c", python_probe_source(), nullptr};
    execvp(argv[0], const_cast<char* const*>(argv));
    _exit(127);
  }
  close(pipefd[1]);
  std::string output;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool timed_out = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{pipefd[0], POLLIN, 0};
    int r = poll(&pfd, 1, int(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    ssize_t n = read(pipefd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buf, size_t(n));
    if (output.size() > (1u << 20)) break;  // a probe never prints this much
  }
  close(pipefd[0]);
  if (timed_out) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    p.error = fmt::format("{} did not answer within {} s", python, timeout_s);
    return p;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && output.empty()) {
    p.error = fmt::format("cannot run {}", python);
    return p;
  }
  parse_probe_output(output, p);
  if (!p.ran && WIFEXITED(status) && WEXITSTATUS(status) != 0)
    p.error = fmt::format("{} exited with status {} ({})", python, WEXITSTATUS(status), p.error);
  return p;
}

namespace {


// The value of `key=value` (key compared case-insensitively) in a small text file, or "".
std::string read_key(const fs::path& file, std::string_view key) {
  std::ifstream in(file);
  if (!in) return {};
  std::string line;
  for (int n = 0; n < 1000 && std::getline(in, line); ++n) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string k(trim(std::string_view(line).substr(0, eq)));
    if (k.size() != key.size()) continue;
    bool same = true;
    for (size_t i = 0; i < k.size(); ++i)
      same = same && std::tolower(static_cast<unsigned char>(k[i])) == std::tolower(static_cast<unsigned char>(key[i]));
    if (!same) continue;
    std::string v(trim(std::string_view(line).substr(eq + 1)));
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
    if (!v.empty()) return v;
  }
  return {};
}

bool try_file(InstallInfo& info, const fs::path& file, std::string_view key) {
  info.looked_in.push_back(file.string());
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return false;
  std::string v = read_key(file, key);
  if (v.empty()) return false;
  info.found = true;
  info.version = v;
  info.source = file.string();
  return true;
}

}  // namespace

InstallInfo read_cann(const std::string& root) {
  InstallInfo info;
  info.root = root;
  std::error_code ec;
  // <arch>-linux/ascend_toolkit_install.info is what the installer writes (CANN install guide).
  // A toolkit may hold another architecture's tree too (for cross-compiling operators): this
  // machine's comes first, the others in name order.
  std::vector<fs::path> arch_dirs;
  for (const auto& e : directory_entries(root, ec)) {
    std::string name = e.path().filename().string();
    if (std::error_code entry_ec; name.ends_with("-linux") && e.is_directory(entry_ec)) arch_dirs.push_back(e.path());
  }
  const std::string own = std::string(host_arch()) + "-linux";
  std::sort(arch_dirs.begin(), arch_dirs.end(), [&](const fs::path& a, const fs::path& b) {
    bool a_own = a.filename() == own, b_own = b.filename() == own;
    return a_own != b_own ? a_own : a < b;
  });
  for (const auto& d : arch_dirs)
    if (try_file(info, d / "ascend_toolkit_install.info", "version")) return info;
  if (try_file(info, fs::path(root) / "ascend_toolkit_install.info", "version")) return info;
  if (try_file(info, fs::path(root) / "version.cfg", "version")) return info;
  if (try_file(info, fs::path(root) / "runtime" / "version.info", "version")) return info;
  if (try_file(info, fs::path(root) / "compiler" / "version.info", "version")) return info;
  return info;
}

InstallInfo read_driver(const std::string& root) {
  InstallInfo info;
  info.root = root;
  try_file(info, fs::path(root) / "version.info", "version");
  return info;
}

std::string default_cann_home() {
  for (const char* var : {"ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"})
    if (const char* v = std::getenv(var); v && *v) return v;
  return "/usr/local/Ascend/ascend-toolkit/latest";
}

std::string base_version(std::string_view v) {
  if (!v.empty() && (v.front() == 'v' || v.front() == 'V')) v.remove_prefix(1);
  std::string out;
  int parts = 0;
  size_t i = 0;
  while (i < v.size() && parts < 3) {
    size_t start = i;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
    if (i == start) break;
    if (!out.empty()) out += '.';
    out += v.substr(start, i - start);
    ++parts;
    if (i < v.size() && v[i] == '.' && parts < 3) ++i;
    else break;
  }
  return parts >= 2 ? out : std::string();
}

void check_env(EnvReport& rep, const Knowledge& kb) {
  using L = EnvCheck::Level;
  auto add = [&](L level, std::string component, std::string message, std::string advice = {}) {
    rep.checks.push_back({level, std::move(component), std::move(message), std::move(advice)});
  };
  const PythonProbe& py = rep.python;
  const KnowledgeVersion* pair = nullptr;  // the wheel (or line) this environment should use
  // The installed wheel: its version string even when `import torch_npu` fails.
  const std::string npu = !py.torch_npu.empty() ? py.torch_npu : py.torch_npu_wheel;
  if (!py.ran) {
    add(L::Warning, "python", fmt::format("could not ask Python about torch: {}", py.error),
        "pass the Python that runs your training with --python");
  } else {
    add(L::Ok, "python", fmt::format("Python {} ({})", py.python_version, py.executable));
    std::string torch_base = base_version(py.torch);
    if (!npu.empty()) {
      const KnowledgeVersion* wheel = kb.find(npu);
      if (wheel) {
        rep.torch_npu_version = wheel->version;
        std::string broken = py.torch_npu.empty() && !py.torch_npu_error.empty()
                                 ? fmt::format("; importing it fails here ({})", py.torch_npu_error)
                                 : "";
        add(L::Ok, "torch_npu",
            fmt::format("{} installed{}: analyses use its op list by default", wheel->describe(), broken));
      } else {
        add(L::Warning, "torch_npu",
            fmt::format("torch_npu {} is not a wheel the knowledge base knows (known for its line: {})", npu,
                        kb.known_names(npu)),
            fmt::format("analyses use {} unless you pass --torch-npu", kb.newest().version));
      }
      std::string want_torch = wheel ? wheel->torch : base_version(npu);
      if (py.torch.empty()) {
        add(L::Mismatch, "torch", fmt::format("torch is not installed for {} ({})", py.command, py.torch_error),
            fmt::format("install torch {} (torch_npu {} pairs with it)", want_torch, npu));
      } else if (!want_torch.empty() && want_torch != torch_base) {
        add(L::Mismatch, "torch",
            fmt::format("torch {} is installed but torch_npu {} pairs with torch {}", py.torch, npu, want_torch),
            fmt::format("install torch {} (or the torch_npu that pairs with torch {}: `npu-doctor versions`)",
                        want_torch, torch_base));
      } else {
        add(L::Ok, "torch", fmt::format("torch {} pairs with torch_npu {}", py.torch, npu));
      }
      pair = wheel;
    } else if (py.torch.empty()) {
      add(L::Mismatch, "torch", fmt::format("torch is not installed for {} ({})", py.command, py.torch_error),
          fmt::format("install torch and the torch_npu of the same line (e.g. torch {} with torch_npu {})",
                      kb.newest().torch, kb.newest().version));
    } else {
      // torch without torch_npu: the normal state of a machine before the port.
      const KnowledgeVersion* line = kb.find(torch_base);
      std::string why = py.torch_npu_error.empty() ? "" : fmt::format(" ({})", py.torch_npu_error);
      if (line && line->is_release()) {
        rep.torch_npu_version = line->version;
        add(L::Warning, "torch_npu", fmt::format("torch_npu is not installed{}; analyses still work", why),
            fmt::format("torch {} is installed; install a torch_npu {} wheel for it (`npu-doctor versions` lists "
                        "them with their CANN)", py.torch, line->torch));
        pair = line;
      } else {
        const KnowledgeVersion& newest = kb.newest();
        std::string advice =
            line ? fmt::format("torch_npu {} exists only as a development branch: install torch {} with torch_npu {} "
                               "(newest release), or build torch_npu from source",
                               line->torch, newest.torch, newest.version)
                 : fmt::format("install a torch that has a torch_npu release, e.g. torch {} with torch_npu {}",
                               newest.torch, newest.version);
        add(L::Mismatch, "torch",
            fmt::format("torch_npu is not installed{} (analyses still work), and no released torch_npu pairs with "
                        "torch {}", why, py.torch),
            advice);
      }
    }
  }

  if (!rep.cann.found) {
    add(!npu.empty() ? L::Mismatch : L::Info, "cann", fmt::format("CANN toolkit not found under {}", rep.cann.root),
        !npu.empty() ? "torch_npu needs the CANN toolkit: install it, then `source "
                       "<install dir>/ascend-toolkit/set_env.sh` (or pass --cann-home)"
                     : "");
  } else if (pair && !pair->cann.empty() && !npu.empty()) {
    if (rep.cann.version.find(pair->cann) != 0)
      add(L::Mismatch, "cann",
          fmt::format("CANN {} is installed; torch_npu {} was released for CANN {}", rep.cann.version, pair->version,
                      pair->cann),
          fmt::format("install CANN {}", pair->cann));
    else
      add(L::Ok, "cann", fmt::format("CANN {} fits torch_npu {}", rep.cann.version, pair->version));
  } else {
    add(L::Info, "cann",
        fmt::format("CANN {} (from {}); {}", rep.cann.version, rep.cann.source,
                    pair && !pair->cann.empty() ? fmt::format("torch_npu {} was released for CANN {}", pair->version, pair->cann)
                                                : std::string("the knowledge base states no CANN for this torch_npu")),
        "check the torch_npu release notes for the CANN it was built against");
  }

  if (!rep.driver.found)
    add(L::Info, "driver", fmt::format("Ascend driver not found under {}", rep.driver.root));
  else
    add(L::Ok, "driver", fmt::format("Ascend driver {} (from {})", rep.driver.version, rep.driver.source));
}

}  // namespace npud
