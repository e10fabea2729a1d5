// Destinations for the bytes the writer produces, so one code path writes a
// NEFF to memory or streams it to a file (through compression and hashing)
// without holding a second copy of gigabytes of weights.
#ifndef NEURON_LIB_NEFF_BYTE_SINK_H_
#define NEURON_LIB_NEFF_BYTE_SINK_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace neff {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual absl::Status Append(std::string_view bytes) = 0;
  // Appends `count` zero bytes (tar padding).
  absl::Status AppendZeros(uint64_t count);
};

// Appends to a std::string.
class StringSink : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  absl::Status Append(std::string_view bytes) override;

 private:
  std::string* out_;
};

// Only counts bytes: used to size the payload before writing it.
class CountingSink : public ByteSink {
 public:
  absl::Status Append(std::string_view bytes) override {
    count_ += bytes.size();
    return absl::OkStatus();
  }
  uint64_t count() const { return count_; }

 private:
  uint64_t count_ = 0;
};

// Writes to a file descriptor, buffering small pieces and passing large ones
// straight to write(2). `name` appears in error messages.
class FdSink : public ByteSink {
 public:
  FdSink(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  absl::Status Append(std::string_view bytes) override;
  absl::Status Flush();

 private:
  absl::Status WriteAll(std::string_view bytes);
  int fd_;
  std::string name_;
  std::string buffer_;
};

}  // namespace neff

#endif  // NEURON_LIB_NEFF_BYTE_SINK_H_
