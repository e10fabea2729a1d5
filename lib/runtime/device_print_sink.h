// Where neuron.device_print values go during one execution on a core (one
// execution runs on a core at a time, so this is the core's queue):
// - text, into a stdout queue of NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES
//   bytes written to the process's stdout after the execution; what does
//   not fit is dropped and the flush says how many bytes (0: no text);
// - a DEBUG_TENSOR_READ event to the core's ndebug stream while a client
//   is connected (lib/runtime/debug_stream.h).
#ifndef NEURON_LIB_RUNTIME_DEVICE_PRINT_SINK_H_
#define NEURON_LIB_RUNTIME_DEVICE_PRINT_SINK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "lib/kernels/device_print.h"
#include "lib/runtime/debug_stream.h"

namespace neuron::runtime {

class DevicePrintSink : public kernels::DevicePrinter {
 public:
  DevicePrintSink(int core, uint64_t queue_bytes);

  // Prints go nowhere: no stdout queue and no connected stream.
  bool idle() const { return capacity_ == 0 && stream_ == nullptr; }
  void Print(const kernels::PrintedTensor& value) override;
  // Writes the queued text (and the drop count) to stdout and empties the
  // queue.
  void Flush();

 private:
  const int core_;
  const uint64_t capacity_;
  std::string queue_;
  uint64_t dropped_ = 0;
  std::shared_ptr<DebugStream> stream_;
};

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_DEVICE_PRINT_SINK_H_
