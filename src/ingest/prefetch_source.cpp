#include "ingest/prefetch_source.hpp"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace npud {
namespace {

class PrefetchSource final : public ByteSource {
 public:
  static constexpr size_t kChunkBytes = size_t(4) << 20;
  static constexpr size_t kChunks = 4;

  explicit PrefetchSource(std::unique_ptr<ByteSource> inner)
      : inner_(std::move(inner)), total_(inner_->total()), compressed_(inner_->compressed()) {
    size_hint = inner_->size_hint;
    thread_ = std::thread([this] { run(); });
  }

  ~PrefetchSource() override {
    {
      std::lock_guard lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  size_t read(char* dst, size_t n) override {
    size_t given = 0;
    while (given < n) {
      if (pos_ == current_.len) {
        if (given > 0) break;   // hand out what we have rather than wait
        if (!next_chunk()) return 0;
        continue;
      }
      size_t k = std::min(n - given, current_.len - pos_);
      std::memcpy(dst + given, current_.data.get() + pos_, k);
      pos_ += k;
      given += k;
    }
    return given;
  }

  uint64_t consumed() const override {
    std::lock_guard lock(m_);
    return consumed_;
  }
  uint64_t total() const override { return total_; }
  bool compressed() const override { return compressed_; }

 private:
  struct Chunk {
    std::unique_ptr<char[]> data;
    size_t len = 0;
    uint64_t consumed = 0;   // inner bytes consumed once this chunk was produced
  };

  // The next produced chunk; false at the end. Rethrows the producer's error once every
  // chunk before it was read.
  bool next_chunk() {
    std::unique_lock lock(m_);
    if (current_.data) free_.push_back(std::move(current_.data));
    current_.len = pos_ = 0;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !full_.empty() || done_; });
    if (full_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return false;
    }
    current_ = std::move(full_.front());
    full_.pop_front();
    consumed_ = current_.consumed;
    cv_.notify_all();
    return true;
  }

  void run() {
    try {
      for (;;) {
        std::unique_ptr<char[]> buf;
        {
          std::unique_lock lock(m_);
          cv_.wait(lock, [&] { return stop_ || !free_.empty() || allocated_ < kChunks; });
          if (stop_) return;
          if (!free_.empty()) {
            buf = std::move(free_.back());
            free_.pop_back();
          } else {
            ++allocated_;
          }
        }
        if (!buf) buf = std::make_unique<char[]>(kChunkBytes);
        size_t len = 0;
        while (len < kChunkBytes) {   // fill it: fewer, larger hand-overs
          size_t k = inner_->read(buf.get() + len, kChunkBytes - len);
          if (k == 0) break;
          len += k;
        }
        std::lock_guard lock(m_);
        if (len > 0) full_.push_back({std::move(buf), len, inner_->consumed()});
        if (len < kChunkBytes) {
          done_ = true;
          cv_.notify_all();
          return;
        }
        cv_.notify_all();
      }
    } catch (...) {
      std::lock_guard lock(m_);
      error_ = std::current_exception();
      done_ = true;
      cv_.notify_all();
    }
  }

  std::unique_ptr<ByteSource> inner_;
  const uint64_t total_;
  const bool compressed_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::deque<Chunk> full_;                      // produced, in order
  std::vector<std::unique_ptr<char[]>> free_;   // read, ready for reuse
  size_t allocated_ = 0;
  bool done_ = false;                           // the producer will add nothing more
  bool stop_ = false;                           // the reader is gone
  std::exception_ptr error_;
  uint64_t consumed_ = 0;
  Chunk current_;                               // the chunk being read (reader thread only)
  size_t pos_ = 0;
  std::thread thread_;
};

// CPUs this process may run on (its affinity mask), capped by NPUD_THREADS when set.
unsigned usable_cpus() {
  unsigned n = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = unsigned(std::max(1, CPU_COUNT(&set)));
  if (const char* env = std::getenv("NPUD_THREADS")) {
    long v = std::strtol(env, nullptr, 10);
    if (v >= 1) n = std::min(n, unsigned(v));
  }
  return n;
}

}  // namespace

std::unique_ptr<ByteSource> prefetched(std::unique_ptr<ByteSource> src) {
  // A plain file's reads are page-cache copies: handing them over costs what it saves
  // (bench/README.md "Reading on two cores"). Inflating is worth a core.
  if (!src->compressed() || usable_cpus() < 2) return src;
  return std::make_unique<PrefetchSource>(std::move(src));
}

}  // namespace npud
