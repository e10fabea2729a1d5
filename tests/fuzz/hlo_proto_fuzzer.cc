// libFuzzer target: arbitrary bytes through the binary proto path
// (HloModuleProto, HloProto, HloModuleProtoWithConfig).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lib/hlo/printer.h"
#include "lib/hlo/proto_reader.h"
#include "lib/hlo/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto module = neuron::hlo::ParseProto(bytes, "fuzz.pb");
  if (module.ok()) {
    (void)neuron::hlo::Verify(**module);
    (void)neuron::hlo::PrintModule(**module);
  }
  return 0;
}
