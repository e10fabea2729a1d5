// libFuzzer target: arbitrary bytes through the HLO text path. Inputs that
// parse are also verified and printed, so those stages see odd modules too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lib/hlo/load.h"
#include "lib/hlo/printer.h"
#include "lib/hlo/text_parser.h"
#include "lib/hlo/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Force the text parser even when the header is damaged.
  std::string text(reinterpret_cast<const char*>(data), size);
  auto module = neuron::hlo::ParseText(text, "fuzz.hlo");
  if (module.ok()) {
    (void)neuron::hlo::Verify(**module);
    (void)neuron::hlo::PrintModule(**module);
  }
  (void)neuron::hlo::LoadModule(text, "fuzz");
  return 0;
}
