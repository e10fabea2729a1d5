#include "lib/runtime/device_print_sink.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/hlo/literal.h"
#include "lib/literal_io/literal_text.h"
#include "nrt/ndebug_stream.h"

namespace neuron::runtime {
namespace {

// The fixed part of the event, then the tensor's bytes.
std::string TensorReadPayload(int core, const kernels::PrintedTensor& v) {
  ndebug_stream_payload_debug_tensor_read_t head;
  std::memset(&head, 0, sizeof head);
  const size_t prefix = std::min(v.prefix.size(), sizeof head.prefix - 1);
  std::memcpy(head.prefix, v.prefix.data(), prefix);
  head.logical_nc_id = static_cast<uint32_t>(core);
  const std::string_view dtype = hlo::ElementTypeName(v.type);
  std::memcpy(head.tensor_dtype, dtype.data(), std::min(dtype.size(), sizeof head.tensor_dtype - 1));
  for (size_t i = 0; i < v.dims.size() && i < 8; ++i) {
    head.tensor_shape[i] = static_cast<uint64_t>(v.dims[i]);
  }
  head.tensor_data_size = static_cast<uint64_t>(v.bytes);
  std::string out(reinterpret_cast<const char*>(&head), sizeof head);
  out.append(reinterpret_cast<const char*>(v.data), static_cast<size_t>(v.bytes));
  return out;
}

}  // namespace

DevicePrintSink::DevicePrintSink(int core, uint64_t queue_bytes)
    : core_(core), capacity_(queue_bytes), stream_(DebugStream::Connected(core)) {}

void DevicePrintSink::Print(const kernels::PrintedTensor& v) {
  if (stream_ != nullptr) {
    stream_->Push({NDEBUG_STREAM_EVENT_TYPE_DEBUG_TENSOR_READ, TensorReadPayload(core_, v)});
  }
  if (capacity_ == 0) return;
  hlo::Literal value = hlo::Literal::Zeros(
      hlo::Shape::Array(v.type, std::vector<int64_t>(v.dims.begin(), v.dims.end())));
  std::memcpy(value.mutable_data().data(), v.data,
              std::min<size_t>(value.data().size(), static_cast<size_t>(v.bytes)));
  const std::string line = std::string(v.prefix) + literal_io::FormatTensor(value) + "\n";
  const size_t room = static_cast<size_t>(capacity_ - queue_.size());
  queue_.append(line, 0, std::min(room, line.size()));
  dropped_ += line.size() - std::min(room, line.size());
}

void DevicePrintSink::Flush() {
  if (queue_.empty() && dropped_ == 0) return;
  if (dropped_ > 0) {
    // A cut line ends here, so the note starts on a line of its own.
    if (!queue_.empty() && queue_.back() != '\n') queue_ += '\n';
    absl::StrAppend(&queue_,
                    absl::StrFormat("[nc%d stdout queue full: %d bytes dropped "
                                    "(NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=%d)]\n",
                                    core_, dropped_, capacity_));
  }
  std::fwrite(queue_.data(), 1, queue_.size(), stdout);
  std::fflush(stdout);
  queue_.clear();
  dropped_ = 0;
}

}  // namespace neuron::runtime
