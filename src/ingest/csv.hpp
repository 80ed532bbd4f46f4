// A small streaming CSV reader (RFC 4180): comma-separated fields, optional double
// quotes around a field, "" for a quote inside quotes, commas / tabs / line breaks inside
// quotes, CRLF or LF record ends, an optional UTF-8 BOM. The torch_npu profiler writes
// its *.csv files this way (kernel_details.csv quotes shapes as """4,1025""" and some
// versions put a tab inside quoted timestamps: "1736413971558972.912\t").
// Errors are InputErrors naming the file and the byte offset of the problem.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/byte_source.hpp"

namespace npud {

class CsvReader {
 public:
  // name: the file name used in errors.
  CsvReader(std::unique_ptr<ByteSource> source, std::string name);
  static CsvReader open(const std::string& path);

  // Reads the next record into fields (decoded: quotes removed). Blank lines are skipped.
  // Returns false at the end of the input. Throws InputError on an unterminated quote or
  // text after a closing quote.
  bool next(std::vector<std::string>& fields);

  // Of the record last returned by next(): byte offset of its start, of field i, and its
  // 1-based line number (line breaks inside quotes count).
  uint64_t record_offset() const { return field_offsets_.empty() ? 0 : field_offsets_.front(); }
  uint64_t field_offset(size_t i) const { return i < field_offsets_.size() ? field_offsets_[i] : record_offset(); }
  uint64_t line() const { return record_line_; }
  const std::string& name() const { return name_; }
  uint64_t bytes_read() const { return offset_; }

 private:
  int peek();  // next byte or -1 at the end, without consuming it
  int get();

  std::unique_ptr<ByteSource> source_;
  std::string name_;
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0;
  uint64_t offset_ = 0;  // bytes consumed
  uint64_t line_ = 1, record_line_ = 0;
  bool started_ = false;
  std::vector<uint64_t> field_offsets_;
};

}  // namespace npud
