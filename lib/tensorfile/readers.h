// The format readers behind TensorFile (internal to lib/tensorfile).
#ifndef NEURON_LIB_TENSORFILE_READERS_H_
#define NEURON_LIB_TENSORFILE_READERS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "lib/tensorfile/tensor_file.h"

namespace neuron::tensorfile {

absl::StatusOr<std::unique_ptr<TensorFile>> OpenNpy(std::shared_ptr<ByteSource> source);
absl::StatusOr<std::unique_ptr<TensorFile>> OpenSafetensors(std::shared_ptr<ByteSource> source);
absl::StatusOr<std::unique_ptr<TensorFile>> OpenNpz(std::shared_ptr<ByteSource> source);

// Arrays stored whole and uncompressed at known offsets of the source
// (.npy, safetensors).
class FlatTensorFile : public TensorFile {
 public:
  FlatTensorFile(Format format, std::shared_ptr<ByteSource> source) : TensorFile(format, std::move(source)) {}
  void Add(ArrayInfo info, uint64_t offset) {
    arrays_.push_back(std::move(info));
    offsets_.push_back(offset);
  }
  absl::Status ReadInto(size_t i, uint8_t* out) const override;
  absl::StatusOr<std::optional<std::string_view>> View(size_t i) const override;

 private:
  std::vector<uint64_t> offsets_;
};

}  // namespace neuron::tensorfile

#endif  // NEURON_LIB_TENSORFILE_READERS_H_
