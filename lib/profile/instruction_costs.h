// What each HLO instruction of a module is to the profiler: which event
// type its span belongs to (compute, dma for data movement, cc_running for
// collectives) and the bytes and flops its span carries as args.
#ifndef NEURON_LIB_PROFILE_INSTRUCTION_COSTS_H_
#define NEURON_LIB_PROFILE_INSTRUCTION_COSTS_H_

#include <cstdint>
#include <string>
#include <unordered_map>

#include "lib/hlo/module.h"

namespace neuron::profile {

struct InstructionCost {
  const char* event = "compute";  // an event type of lib/config/inspect_events
  std::string opcode;
  std::string computation;
  int64_t bytes = 0;  // operands read + result written (array leaves)
  int64_t flops = 0;  // multiply-adds count 2; elementwise ops 1 per element
  std::string args_json;  // {"hlo":..,"opcode":..,"computation":..,"bytes":..,"flops":..}
  // Gather, scatter, dynamic-slice, dynamic-update-slice: their addresses
  // depend on data, so a DGE ring moves their bytes; -1 for the rest.
  int dge_ring = -1;
  int64_t dge_bytes = 0;  // what the ring moves: the gathered / updated bytes
};

// Keyed by instruction name (names are unique within a module).
using CostTable = std::unordered_map<std::string, InstructionCost>;

CostTable BuildCostTable(const hlo::Module& module);

}  // namespace neuron::profile

#endif  // NEURON_LIB_PROFILE_INSTRUCTION_COSTS_H_
