// neuron-ls: list Neuron devices (placeholder until lib/device lands).
#include <cstring>

#include "lib/support/cli.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
    neuron::PrintVersion("neuron-ls");
    return neuron::kExitOk;
  }
  return neuron::kExitOk;
}
