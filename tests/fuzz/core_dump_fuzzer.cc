// libFuzzer target for the core-dump reader (man/neuron-core-dump.5): any
// bytes through DecodeCoreDump with a 16 MiB inflate bound (so zstd bombs
// stay cheap), then every section's metadata and data touched. Nothing may
// crash, hang or allocate more than the input justifies.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lib/dump/core_dump_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  volatile size_t sink = 0;
  auto sections = neuron::dump::DecodeCoreDump(bytes, "fuzz.ncdump", 16 << 20);
  if (sections.ok()) {
    for (const auto& s : *sections) {
      sink = sink + s.meta.dump().size();
      for (char c : s.data) sink = sink + static_cast<unsigned char>(c);
    }
    // What was read writes back.
    (void)neuron::dump::EncodeCoreDump(*sections);
  }
  (void)sink;
  return 0;
}
