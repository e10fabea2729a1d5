// Tensor files, the one reader of the project: a NumPy array (.npy), a
// NumPy bundle (.npz: a zip of .npy members, as np.savez and
// np.savez_compressed write it) or a safetensors file. The format is told
// by content, not by the name. Opening reads the headers only; each
// array's bytes go straight into the caller's buffer (a device tensor),
// read or inflated there once, or are viewed in place where the file is
// mapped and the array stored uncompressed.
//
// A hostile file (offsets past the end or overlapping, a header of
// gigabytes, a member whose size disagrees with its shape, a zip bomb)
// gives one error naming the file and what is wrong; nothing is allocated
// that the file's own size does not justify, except by ReadInto, whose
// buffer the caller sized from what it expects.
#ifndef NEURON_LIB_TENSORFILE_TENSOR_FILE_H_
#define NEURON_LIB_TENSORFILE_TENSOR_FILE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/tensorfile/byte_source.h"
#include "lib/tensorfile/dtype.h"

namespace neuron::tensorfile {

enum class Format { kNpy, kNpz, kSafetensors };
std::string_view FormatName(Format format);  // "npy", "npz", "safetensors"

// Which format `head` (the first bytes of a file, 16 are enough) is, if any.
std::optional<Format> DetectFormat(std::string_view head);

struct ArrayInfo {
  std::string key;  // .npz: the member name less ".npy"; safetensors: the tensor's name; .npy: ""
  StoredType dtype;
  std::vector<int64_t> dims;
  uint64_t bytes = 0;        // of data
  bool compressed = false;   // a deflated .npz member
};

class TensorFile {
 public:
  // Opens `path` ("-": standard input, read whole).
  static absl::StatusOr<std::unique_ptr<TensorFile>> Open(const std::string& path);
  // Bytes in memory; `display` names them in errors.
  static absl::StatusOr<std::unique_ptr<TensorFile>> FromBytes(std::string bytes, std::string display);
  static absl::StatusOr<std::unique_ptr<TensorFile>> FromSource(std::shared_ptr<ByteSource> source);

  virtual ~TensorFile() = default;

  Format format() const { return format_; }
  const std::string& display() const { return source_->display(); }
  // In file order.
  const std::vector<ArrayInfo>& arrays() const { return arrays_; }
  // The array with this key, or nullptr.
  const ArrayInfo* Find(std::string_view key) const;

  // Array i's bytes into `out`, which holds arrays()[i].bytes.
  virtual absl::Status ReadInto(size_t i, uint8_t* out) const = 0;
  // Array i's bytes in place, where they are stored uncompressed (the file
  // is mapped on first use); nullopt where they are not (an .npz member).
  virtual absl::StatusOr<std::optional<std::string_view>> View(size_t i) const = 0;

  // Names the array in messages: "FILE" for an .npy, else "FILE[KEY]".
  std::string Where(size_t i) const;

 protected:
  TensorFile(Format format, std::shared_ptr<ByteSource> source)
      : format_(format), source_(std::move(source)) {}

  Format format_;
  std::shared_ptr<ByteSource> source_;
  std::vector<ArrayInfo> arrays_;
};

}  // namespace neuron::tensorfile

#endif  // NEURON_LIB_TENSORFILE_TENSOR_FILE_H_
