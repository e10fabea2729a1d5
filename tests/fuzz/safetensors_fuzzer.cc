// libFuzzer target for the safetensors reader (lib/tensorfile): any bytes through
// TensorFile::FromBytes, then every array read out (those up to 1 MiB: the
// caller sizes the buffer from what it expects, as neuron-exec does from the
// input's shape) and viewed. Nothing may crash, hang or allocate more than
// the input justifies.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/tensorfile/tensor_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = neuron::tensorfile::TensorFile::FromBytes(std::string(reinterpret_cast<const char*>(data), size),
                                                        "fuzz.safetensors");
  if (!file.ok()) return 0;
  volatile size_t sink = 0;
  for (size_t i = 0; i < (*file)->arrays().size(); ++i) {
    const neuron::tensorfile::ArrayInfo& a = (*file)->arrays()[i];
    if (a.bytes > (1u << 20)) continue;
    std::vector<uint8_t> out(a.bytes);
    if ((*file)->ReadInto(i, out.data()).ok() && !out.empty()) sink = sink + out[0];
    if (auto view = (*file)->View(i); view.ok() && view->has_value()) sink = sink + (*view)->size();
  }
  (void)sink;
  return 0;
}
