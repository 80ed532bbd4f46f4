#include "ingest/csv.hpp"

#include <fmt/format.h>

#include "util/input_error.hpp"
#include "ingest/limits.hpp"

namespace npud {

namespace {
constexpr size_t kChunk = 1 << 16;
}

CsvReader::CsvReader(std::unique_ptr<ByteSource> source, std::string name)
    : source_(std::move(source)), name_(std::move(name)), buf_(kChunk) {}

CsvReader CsvReader::open(const std::string& path) { return CsvReader(open_byte_source(path), path); }

int CsvReader::peek() {
  if (pos_ == end_) {
    end_ = source_->read(buf_.data(), buf_.size());
    pos_ = 0;
    if (end_ == 0) return -1;
  }
  return static_cast<unsigned char>(buf_[pos_]);
}

int CsvReader::get() {
  int c = peek();
  if (c >= 0) {
    ++pos_;
    ++offset_;
  }
  return c;
}

bool CsvReader::next(std::vector<std::string>& fields) {
  if (!started_) {
    started_ = true;
    // A UTF-8 byte order mark (Excel-friendly writers add one) is not part of the first name.
    if (peek() == 0xEF) {
      get();
      if (get() != 0xBB || get() != 0xBF)
        throw InputError(name_, 0, "invalid byte at the start of the file (a broken UTF-8 byte order mark?)");
    }
  }
  fields.clear();
  field_offsets_.clear();
  for (;;) {  // skip blank lines
    int c = peek();
    if (c < 0) return false;
    if (c == '\n' || c == '\r') {
      get();
      if (c == '\r' && peek() == '\n') get();
      ++line_;
      continue;
    }
    break;
  }
  record_line_ = line_;
  std::string field;
  // Bounded like the JSON readers (ingest/limits.hpp): a file with no line breaks or no
  // closing quote must not grow one field or one record without end.
  auto too_long = [&] {
    throw InputError(name_, field_offsets_.back(),
                     fmt::format("line {}: a field longer than {} MiB", record_line_, limits::kMaxCsvFieldBytes >> 20));
  };
  for (;;) {
    if (fields.size() == limits::kMaxCsvFields)
      throw InputError(name_, field_offsets_.front(),
                       fmt::format("line {}: more than {} fields in one record", record_line_, limits::kMaxCsvFields));
    field_offsets_.push_back(offset_);
    field.clear();
    int c = peek();
    if (c == '"') {
      uint64_t opened = offset_;
      get();
      for (;;) {
        c = get();
        if (c < 0)
          throw InputError(name_, opened, "unterminated quoted field: the quote opened here is never closed");
        if (c == '"') {
          if (peek() != '"') break;
          get();
        } else if (c == '\n') {
          ++line_;
        }
        if (field.size() == limits::kMaxCsvFieldBytes) too_long();
        field.push_back(char(c));
      }
      c = peek();
      if (c >= 0 && c != ',' && c != '\n' && c != '\r')
        throw InputError(name_, offset_,
                         "unexpected character after a closing quote (a quote inside a quoted field must be doubled)");
    } else {
      // Unquoted: up to the next comma or line end. A stray quote here is kept as text.
      while ((c = peek()) >= 0 && c != ',' && c != '\n' && c != '\r') {
        if (field.size() == limits::kMaxCsvFieldBytes) too_long();
        field.push_back(char(get()));
      }
    }
    fields.push_back(field);
    if (c == ',') {
      get();
      continue;
    }
    if (c == '\r' || c == '\n') {
      get();
      if (c == '\r' && peek() == '\n') get();
      ++line_;
    }
    return true;
  }
}

}  // namespace npud
