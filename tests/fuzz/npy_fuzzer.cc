// libFuzzer target for the .npy readers: any bytes through
// tensorfile::ParseNpyArray, program::ParseNpy and neuron-exec's
// ParseNpyTensor (all on lib/tensorfile's one header parser), and a
// parsed tensor back out through NpyBytes. Nothing may crash, hang or
// allocate more than the input justifies.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lib/program/npy.h"
#include "lib/literal_io/npy_literal.h"
#include "lib/tensorfile/npy_array.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  volatile size_t sink = 0;
  if (auto a = neuron::tensorfile::ParseNpyArray(bytes, "fuzz.npy"); a.ok()) sink = sink + a->data.size();
  if (auto a = neuron::program::ParseNpy(bytes); a.ok()) {
    for (char c : a->data) sink = sink + static_cast<unsigned char>(c);
  }
  if (auto t = neuron::literal_io::ParseNpyTensor(bytes, "fuzz.npy"); t.ok()) {
    sink = sink + neuron::literal_io::NpyBytes(*t).size();
  }
  (void)sink;
  return 0;
}
