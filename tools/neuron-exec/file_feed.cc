#include "tools/neuron-exec/file_feed.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/literal_io/npy_literal.h"

namespace neuron::exec_tool {

using literal_io::ReadNpyFile;
using literal_io::WriteNpyFile;
using literal_io::ConvertTensor;

// Infeed streams start here, far past any model's parameter count, so the
// values never repeat an input's.
constexpr uint64_t kInfeedSeedSalt = 0x1feedULL << 32;

FileFeed::FileFeed(std::vector<std::string> infeed_files, std::string outfeed_dir,
                   std::optional<uint64_t> random_seed)
    : infeed_files_(std::move(infeed_files)), outfeed_dir_(std::move(outfeed_dir)) {
  if (random_seed && infeed_files_.empty())
    random_ = std::make_unique<RandomTensors>(*random_seed ^ kInfeedSeedSalt);
}

absl::Status FileFeed::Infeed(const std::string& instruction, const hlo::Shape& shape,
                              uint8_t* out, size_t bytes) {
  if (infeed_files_.empty() && random_) {
    hlo::Literal value = random_->Next(shape);
    if (value.data().size() != bytes) {
      return absl::InternalError(absl::StrCat("infeed '", instruction, "': drew ", value.data().size(),
                                              " bytes for ", bytes));
    }
    std::memcpy(out, value.data().data(), bytes);
    ++next_infeed_;
    return absl::OkStatus();
  }
  if (infeed_files_.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "infeed '", instruction, "' wants a ", shape.ToString(false),
        " value: give it with --infeed FILE.npy"));
  }
  if (next_infeed_ >= infeed_files_.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "infeed '", instruction, "' wants a ", shape.ToString(false), " value, but the ",
        infeed_files_.size(), " --infeed file(s) given are used up"));
  }
  const std::string& path = infeed_files_[next_infeed_++];
  absl::StatusOr<hlo::Literal> value = ReadNpyFile(path);
  if (!value.ok()) return value.status();
  if (value->shape().dims != shape.dims) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": infeed '", instruction, "' wants ", shape.ToString(false), ", the file holds ",
        value->shape().ToString(false)));
  }
  hlo::Literal converted = ConvertTensor(*value, shape.type);
  if (converted.data().size() != bytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": infeed '", instruction, "' wants ",
                                                   bytes, " bytes, the file gives ",
                                                   converted.data().size()));
  }
  if (bytes) std::memcpy(out, converted.data().data(), bytes);
  return absl::OkStatus();
}

absl::Status FileFeed::Outfeed(const std::string& instruction, const hlo::Shape& shape,
                               const uint8_t* data, size_t bytes) {
  if (outfeed_dir_.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "outfeed '", instruction, "': nowhere to write its values (neuron-exec --outfeed-dir DIR)"));
  }
  std::vector<uint8_t> copy(data, data + bytes);
  const hlo::Literal value = hlo::Literal::FromData(shape, std::move(copy));
  return WriteNpyFile(absl::StrCat(outfeed_dir_, "/outfeed", next_outfeed_++, ".npy"), value);
}

}  // namespace neuron::exec_tool
