// neuron-exec's host feed: infeed values read from .npy files in the order
// given (--infeed, one file per array an infeed takes), or with
// --random-inputs and no files drawn as the inputs are; outfeed values
// written to DIR/outfeed0.npy, outfeed1.npy, ... in the order the model
// wrote them (--outfeed-dir).
#ifndef NEURON_TOOLS_NEURON_EXEC_FILE_FEED_H_
#define NEURON_TOOLS_NEURON_EXEC_FILE_FEED_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/hlo/shape.h"
#include "tools/neuron-exec/random_tensors.h"

namespace neuron::exec_tool {

// Handed to libnrt as an nrt_tools_feed_t (exec_command.cc).
class FileFeed {
 public:
  // random_seed: without infeed files, infeeds take random values from
  // this seed's streams (apart from the inputs' own).
  FileFeed(std::vector<std::string> infeed_files, std::string outfeed_dir,
           std::optional<uint64_t> random_seed = std::nullopt);

  absl::Status Infeed(const std::string& instruction, const hlo::Shape& shape, uint8_t* out,
                      size_t bytes);
  absl::Status Outfeed(const std::string& instruction, const hlo::Shape& shape,
                       const uint8_t* data, size_t bytes);

  size_t infeeds_taken() const { return next_infeed_; }
  size_t outfeeds_written() const { return next_outfeed_; }

 private:
  std::vector<std::string> infeed_files_;
  std::string outfeed_dir_;  // "" = outfeed refused
  std::unique_ptr<RandomTensors> random_;
  size_t next_infeed_ = 0;
  size_t next_outfeed_ = 0;
};

}  // namespace neuron::exec_tool

#endif  // NEURON_TOOLS_NEURON_EXEC_FILE_FEED_H_
