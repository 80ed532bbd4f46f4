// `npu-doctor env` on fake install trees (tests/data/env) and fake Pythons that print fixed
// probe output, so nothing here depends on what this machine has installed.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "env/env_probe.hpp"
#include "knowledge/knowledge.hpp"
#include "scratch_path.hpp"

namespace npud {
namespace {

const std::string kData = std::string(NPUD_TEST_DATA) + "/env";
std::string fake(const std::string& name) { return kData + "/fake_python/" + name; }

const EnvCheck* check_of(const EnvReport& r, std::string_view component, EnvCheck::Level level) {
  for (const auto& c : r.checks)
    if (c.component == component && c.level == level) return &c;
  return nullptr;
}

EnvReport env_with(const std::string& python, const std::string& cann = "cann-8.0.RC2",
                   const std::string& driver = "driver-24.1") {
  EnvReport r;
  r.python = probe_python(fake(python), 30);
  r.cann = read_cann(kData + "/" + cann);
  r.driver = read_driver(kData + "/" + driver);
  check_env(r, Knowledge::builtin());
  return r;
}

// Runs the binary, returns (exit code, stdout).
std::pair<int, std::string> run_binary(const std::string& args) {
  std::string cmd = std::string(NPUD_BINARY) + " " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(Env, BaseVersion) {
  EXPECT_EQ(base_version("2.1.0.post3"), "2.1.0");
  EXPECT_EQ(base_version("2.1.0+cpu"), "2.1.0");
  EXPECT_EQ(base_version("v2.4.0"), "2.4.0");
  EXPECT_EQ(base_version("1.13.0a0+git"), "1.13.0");
  EXPECT_EQ(base_version("2.1"), "2.1");
  EXPECT_EQ(base_version("x"), "");
}

TEST(Env, ReadsCannInstallInfo) {
  InstallInfo c = read_cann(kData + "/cann-8.0.RC2");
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.version, "8.0.RC2");
  EXPECT_NE(c.source.find("x86_64-linux/ascend_toolkit_install.info"), std::string::npos);
}

// A toolkit holding two architectures' trees: the one of the machine the binary runs on wins
// (tests/e2e/test_release.py runs the aarch64 build under qemu on the same tree).
TEST(Env, ReadsTheTreeOfItsOwnArchitectureFirst) {
  InstallInfo c = read_cann(kData + "/cann-two-arches");
  ASSERT_TRUE(c.found);
  std::string own(host_arch());
  EXPECT_EQ(c.version, own == "aarch64" ? "8.0.RC3" : "8.0.RC3.alpha001");
  EXPECT_NE(c.source.find(own + "-linux/ascend_toolkit_install.info"), std::string::npos) << c.source;
}

TEST(Env, FallsBackToRuntimeVersionInfo) {
  InstallInfo c = read_cann(kData + "/cann-runtime-only");
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.version, "7.0.0");
}

TEST(Env, MissingTreesAreNotFound) {
  InstallInfo c = read_cann(kData + "/does-not-exist");
  EXPECT_FALSE(c.found);
  EXPECT_FALSE(c.looked_in.empty());
  InstallInfo d = read_driver(kData + "/does-not-exist");
  EXPECT_FALSE(d.found);
}

TEST(Env, ReadsDriverVersion) {
  InstallInfo d = read_driver(kData + "/driver-24.1");
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.version, "24.1.rc2");
}

TEST(Env, MatchingVersionsAreConsistent) {
  EnvReport r = env_with("torch-2.1.0-npu-2.1.0");
  ASSERT_TRUE(r.python.ran) << r.python.error;
  EXPECT_EQ(r.python.torch, "2.1.0+cpu");
  EXPECT_EQ(r.python.torch_npu, "2.1.0.post6");
  EXPECT_TRUE(r.consistent());
  EXPECT_NE(check_of(r, "torch_npu", EnvCheck::Level::Ok), nullptr);
  EXPECT_EQ(r.torch_npu_version, "2.1.0.post6");
  const EnvCheck* cann = check_of(r, "cann", EnvCheck::Level::Ok);  // 2.1.0.post6: tag v6.0.rc2, CANN 8.0.RC2
  ASSERT_NE(cann, nullptr);
  EXPECT_NE(cann->message.find("CANN 8.0.RC2 fits torch_npu 2.1.0.post6"), std::string::npos) << cann->message;
}

// The wheel's own CANN line: 2.1.0.post3 (tag v6.0.rc1) was released for CANN 8.0.RC1.
TEST(Env, CannOfTheInstalledWheel) {
  EnvReport r = env_with("torch-2.1.0-npu-2.1.0");
  r.checks.clear();
  r.python.torch_npu = "2.1.0.post3";
  check_env(r, Knowledge::builtin());
  const EnvCheck* c = check_of(r, "cann", EnvCheck::Level::Mismatch);
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->advice.find("install CANN 8.0.RC1"), std::string::npos) << c->advice;
}

// A CPU machine with the torch_npu wheel installed but not importable (no CANN): the
// probe reads the wheel's dist-info, and env uses that wheel's op list.
TEST(Env, PicksTheInstalledWheelFromItsDistInfo) {
  if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  std::filesystem::path site = test::scratch_path("npud_env_site");
  std::filesystem::create_directories(site / "torch_npu-2.1.0.post8.dist-info");
  std::ofstream(site / "torch_npu-2.1.0.post8.dist-info" / "METADATA")
      << "Metadata-Version: 2.1\nName: torch_npu\nVersion: 2.1.0.post8\n";
  const char* old = std::getenv("PYTHONPATH");
  std::string saved = old ? old : "";
  ::setenv("PYTHONPATH", site.c_str(), 1);
  EnvReport r;
  r.python = probe_python("/usr/bin/python3", 60);
  if (old) ::setenv("PYTHONPATH", saved.c_str(), 1);
  else ::unsetenv("PYTHONPATH");
  r.cann = read_cann(kData + "/does-not-exist");
  r.driver = read_driver(kData + "/does-not-exist");
  check_env(r, Knowledge::builtin());
  std::filesystem::remove_all(site);
  ASSERT_TRUE(r.python.ran) << r.python.error;
  EXPECT_EQ(r.python.torch_npu, "");              // `import torch_npu` fails: no such module
  EXPECT_EQ(r.python.torch_npu_wheel, "2.1.0.post8");
  EXPECT_EQ(r.torch_npu_version, "2.1.0.post8");
  const EnvCheck* c = check_of(r, "torch_npu", EnvCheck::Level::Ok);
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->message.find("release tag v6.0.rc3-pytorch2.1.0, op-plugin 070332e65baf"), std::string::npos)
      << c->message;
  EXPECT_NE(check_of(r, "cann", EnvCheck::Level::Mismatch), nullptr);  // a wheel without CANN
}

TEST(Env, TorchMismatchSaysWhatToInstall) {
  EnvReport r = env_with("torch-2.2.0-npu-2.1.0");
  EXPECT_FALSE(r.consistent());
  const EnvCheck* c = check_of(r, "torch", EnvCheck::Level::Mismatch);
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->message.find("torch_npu 2.1.0.post6 pairs with torch 2.1.0"), std::string::npos) << c->message;
  EXPECT_NE(c->advice.find("install torch 2.1.0"), std::string::npos) << c->advice;
}

TEST(Env, WithoutTorchNpuWorksAndAdvises) {
  EnvReport r = env_with("torch-2.1.0-no-npu", "does-not-exist", "does-not-exist");
  EXPECT_TRUE(r.consistent());  // nothing inconsistent yet: torch_npu is simply not there
  const EnvCheck* c = check_of(r, "torch_npu", EnvCheck::Level::Warning);
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->message.find("not installed"), std::string::npos);
  EXPECT_NE(c->advice.find("torch 2.1.0 is installed; install a torch_npu 2.1.0 wheel for it"), std::string::npos)
      << c->advice;
}

TEST(Env, TorchNpuWithoutCannIsAMismatch) {
  EnvReport r = env_with("torch-2.1.0-npu-2.1.0", "does-not-exist");
  EXPECT_FALSE(r.consistent());
  EXPECT_NE(check_of(r, "cann", EnvCheck::Level::Mismatch), nullptr);
}

TEST(Env, NoTorchIsAMismatch) {
  EnvReport r = env_with("no-torch");
  EXPECT_FALSE(r.consistent());
  EXPECT_NE(check_of(r, "torch", EnvCheck::Level::Mismatch), nullptr);
}

TEST(Env, ProbeSkipsBannerLines) {
  EnvReport r = env_with("banner-then-json");
  ASSERT_TRUE(r.python.ran);
  EXPECT_EQ(r.python.torch_npu, "2.1.0");
}

TEST(Env, BrokenOrMissingPythonIsReportedNotFatal) {
  PythonProbe g = probe_python(fake("garbage"), 30);
  EXPECT_FALSE(g.ran);
  EXPECT_NE(g.error.find("status 3"), std::string::npos) << g.error;
  PythonProbe m = probe_python(kData + "/fake_python/no-such-python", 30);
  EXPECT_FALSE(m.ran);
  EXPECT_NE(m.error.find("cannot run"), std::string::npos) << m.error;
  PythonProbe h = probe_python(fake("hangs"), 1);
  EXPECT_FALSE(h.ran);
  EXPECT_NE(h.error.find("did not answer"), std::string::npos) << h.error;
}

// Issue (hardening): an env time-out left the probe's own children running.
TEST(Env, TimeOutKillsWhatThePythonStarted) {
  std::string pidfile = test::scratch_path("npud_env_pid").string();
  ::setenv("NPUD_TEST_PIDFILE", pidfile.c_str(), 1);
  PythonProbe h = probe_python(fake("spawns-and-hangs"), 1);
  ::unsetenv("NPUD_TEST_PIDFILE");
  EXPECT_FALSE(h.ran);
  std::ifstream in(pidfile);
  long pid = 0;
  ASSERT_TRUE(in >> pid) << "the fake Python wrote no pid";
  std::filesystem::remove(pidfile);
  // Dead, or a zombie waiting for a reaper: either way no longer running.
  bool running = true;
  for (int i = 0; i < 50 && running; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string skip, state;
    running = bool(stat >> skip >> skip >> state) && state != "Z";
    if (running) ::usleep(20000);
  }
  EXPECT_FALSE(running) << "the probe's child " << pid << " outlived the time-out";
}

TEST(EnvCli, APythonThatCannotRunIsNeverConsistent) {
  auto [code, out] = run_binary("env --python /nonexistent/python3 --cann-home " + kData + "/cann-8.0.RC2");
  EXPECT_EQ(code, 2) << out;
  EXPECT_EQ(out.find("Consistent"), std::string::npos) << out;
  EXPECT_NE(out.find("Not checked"), std::string::npos) << out;
}

TEST(EnvCli, ExitCodesAndJson) {
  std::string common = " --cann-home " + kData + "/cann-8.0.RC2 --driver-home " + kData + "/driver-24.1";
  auto [ok, ok_out] = run_binary("env --python " + fake("torch-2.1.0-npu-2.1.0") + common);
  EXPECT_EQ(ok, 0) << ok_out;
  EXPECT_NE(ok_out.find("CANN       8.0.RC2"), std::string::npos) << ok_out;
  EXPECT_NE(ok_out.find("driver     24.1.rc2"), std::string::npos) << ok_out;

  auto [bad, bad_out] = run_binary("env --format json --python " + fake("torch-2.2.0-npu-2.1.0") + common);
  EXPECT_EQ(bad, 1);
  EXPECT_NE(bad_out.find("\"consistent\": false"), std::string::npos) << bad_out;
  EXPECT_NE(bad_out.find("\"level\": \"mismatch\""), std::string::npos) << bad_out;
  // Opens like every JSON document of the CLI (docs/json-schema.md).
  EXPECT_EQ(bad_out.find("{\n  \"schema_version\": 1,\n  \"tool\": {\n    \"name\": \"npu-doctor\""), 0u) << bad_out;
  EXPECT_NE(bad_out.find("\"command\": \"env\""), std::string::npos) << bad_out;

  auto [usage, usage_out] = run_binary("env --format yaml");
  EXPECT_EQ(usage, 2);
}

}  // namespace
}  // namespace npud
