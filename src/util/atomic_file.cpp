#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <set>
#include <stdexcept>
#include <utility>

namespace npud {
namespace {

namespace fs = std::filesystem;

// While a temporary file exists, SIGINT, SIGTERM and SIGHUP (where they would kill us anyway)
// remove it first, then take their default action: Ctrl-C during --fix or -o leaves nothing
// behind. Only SIGKILL can still leave `.NAME.npud-XXXXXX` (nothing runs after it).
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};
char g_pending_tmp[4096];
volatile sig_atomic_t g_pending = 0;

extern "C" void remove_pending_then_die(int sig) {
  if (g_pending) ::unlink(g_pending_tmp);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

class PendingTmpGuard {
 public:
  // Blocks the signals while mkostemp creates the file, so none lands between its creation
  // and the handler knowing its name.
  PendingTmpGuard() {
    sigemptyset(&set_);
    for (int s : kCleanupSignals) sigaddset(&set_, s);
    ::sigprocmask(SIG_BLOCK, &set_, &old_mask_);
  }
  // The file exists now (tmp is its name, or "" when mkostemp failed): arm and unblock.
  void created(const std::string& tmp) {
    if (!tmp.empty() && tmp.size() < sizeof g_pending_tmp) {
      std::memcpy(g_pending_tmp, tmp.c_str(), tmp.size() + 1);
      g_pending = 1;
      for (size_t i = 0; i < std::size(kCleanupSignals); ++i) {
        struct sigaction now{};
        ::sigaction(kCleanupSignals[i], nullptr, &now);
        if (now.sa_handler != SIG_DFL) continue;  // ignored, or the program's own handler: leave it
        struct sigaction sa{};
        sa.sa_handler = remove_pending_then_die;
        sigemptyset(&sa.sa_mask);
        installed_[i] = ::sigaction(kCleanupSignals[i], &sa, nullptr) == 0;
      }
    }
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  ~PendingTmpGuard() {
    g_pending = 0;
    for (size_t i = 0; i < std::size(kCleanupSignals); ++i)
      if (installed_[i]) ::signal(kCleanupSignals[i], SIG_DFL);
  }

 private:
  sigset_t set_, old_mask_;
  bool installed_[std::size(kCleanupSignals)] = {};
};

std::runtime_error failure(const std::string& what, const std::string& path, int err);

// A new temporary file beside `target` (.NAME.npud-XXXXXX in its folder: the same file system,
// so the rename that commits it is atomic), registered with `guard`; its name goes to `tmp`.
// commit() writes it; check_writable() proves it can be made, before a long run.
int create_temp_beside(const std::string& target, PendingTmpGuard& guard, std::string& tmp) {
  fs::path t(target);
  std::string dir = t.has_parent_path() ? t.parent_path().string() : ".";
  tmp = dir + "/." + t.filename().string() + ".npud-XXXXXX";
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  int err = errno;
  guard.created(fd < 0 ? std::string() : tmp);
  if (fd < 0) throw failure("cannot create a file in", dir, err);
  return fd;
}

std::runtime_error failure(const std::string& what, const std::string& path, int err) {
  return std::runtime_error(what + " " + path + ": " + std::strerror(err));
}

// Writes all of data to fd, retrying short writes and EINTR.
bool write_all(int fd, const std::string& data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= size_t(n);
  }
  return true;
}

std::set<std::pair<dev_t, ino_t>>& protected_inputs() {
  static std::set<std::pair<dev_t, ino_t>> inputs;
  return inputs;
}

mode_t current_umask() {
  mode_t m = ::umask(0);
  ::umask(m);
  return m;
}

}  // namespace

void protect_input(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) protected_inputs().emplace(st.st_dev, st.st_ino);
}

AtomicFile::AtomicFile(std::string path, Replace may) : path_(std::move(path)), target_(path_) {
  struct stat st;
  if (may == Replace::output_only && ::stat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      protected_inputs().contains({st.st_dev, st.st_ino}))
    throw std::runtime_error("will not write " + path_ + ": it is an input of this command (name another file)");
  if (::lstat(path_.c_str(), &st) != 0) {
    if (errno != ENOENT) throw failure("cannot write", path_, errno);
    // A new file: its folder must exist now, not only at commit().
    fs::path parent = fs::path(path_).parent_path();
    if (!parent.empty() && ::stat(parent.c_str(), &st) != 0) throw failure("cannot write", path_, errno);
    return;
  }
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    fs::path real = fs::canonical(path_, ec);
    if (ec) {
      // /proc/self/fd/N (and /dev/stdout, which leads there) names a pipe or socket as
      // "pipe:[123]", no path: the kernel still opens it through the link, so write in place.
      if (::stat(path_.c_str(), &st) != 0) {
        if (errno == ENOENT) throw std::runtime_error("cannot write " + path_ + ": it is a symbolic link that leads nowhere");
        throw failure("cannot write", path_, errno);
      }
      if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        throw std::runtime_error("cannot write " + path_ + ": it leads to a file that has no path any more (deleted)");
      special_ = true;
      return;
    }
    target_ = real.string();
    if (::stat(target_.c_str(), &st) != 0) throw failure("cannot write", path_, errno);
  }
  if (S_ISDIR(st.st_mode)) throw std::runtime_error("cannot write " + path_ + ": it is a directory");
  special_ = !S_ISREG(st.st_mode);
}

void AtomicFile::check_writable() const {
  if (special_) {
    // Permission only, no open: opening a named pipe would hand its reader an end of file
    // before the report comes.
    if (::access(target_.c_str(), W_OK) != 0) throw failure("cannot write", path_, errno);
    return;
  }
  PendingTmpGuard guard;
  std::string tmp;
  ::close(create_temp_beside(target_, guard, tmp));
  ::unlink(tmp.c_str());
}

void AtomicFile::commit() {
  const std::string data = text_.str();
  if (special_) {
    int fd = ::open(target_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) throw failure("cannot write", path_, errno);
    bool ok = write_all(fd, data);
    int err = errno;
    ::close(fd);
    if (!ok) throw failure("cannot write", path_, err);
    return;
  }
  PendingTmpGuard guard;
  std::string tmp;
  int fd = create_temp_beside(target_, guard, tmp);
  // The new file takes the old one's permissions (--fix on an executable script keeps it
  // executable); a new file gets what the umask allows, as any created file would.
  struct stat st;
  mode_t mode = ::stat(target_.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? (st.st_mode & 07777)
                                                                           : (0666 & ~current_umask());
  // ... and its owner, where we may set it (root fixing a user's file must not take it).
  bool replaces = ::stat(target_.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  if (replaces && (st.st_uid != ::geteuid() || st.st_gid != ::getegid()))
    (void)!::fchown(fd, st.st_uid, st.st_gid);  // not permitted: the caller checked (scan --fix)
  bool ok = ::fchmod(fd, mode) == 0 && write_all(fd, data) && ::fsync(fd) == 0;
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    throw failure("cannot write", path_, err);
  }
  if (std::rename(tmp.c_str(), target_.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    throw failure("cannot replace", path_, err);
  }
}

}  // namespace npud
