// Where a model's infeed values come from and its outfeed values go: the
// host side of XLA's infeed/outfeed queues. Each infeed step takes the next
// value for each array of its shape, each outfeed step hands over each
// array of its operand, in execution order.
#ifndef NEURON_LIB_KERNELS_HOST_FEED_H_
#define NEURON_LIB_KERNELS_HOST_FEED_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "lib/hlo/shape.h"

namespace neuron::kernels {

class HostFeed {
 public:
  virtual ~HostFeed() = default;
  // Fills `bytes` bytes at `out` with the next value, an array of `shape`;
  // `instruction` names the infeed in errors.
  virtual absl::Status Infeed(const std::string& instruction, const hlo::Shape& shape,
                              uint8_t* out, size_t bytes) = 0;
  // Takes an array of `shape` the model wrote out.
  virtual absl::Status Outfeed(const std::string& instruction, const hlo::Shape& shape,
                               const uint8_t* data, size_t bytes) = 0;
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_HOST_FEED_H_
