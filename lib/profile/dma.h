// The simulated DMA engine as the device profile sees it: a copy between
// host and device memory moves over one of a core's DMA queues in packets
// of NEURON_RT_DBG_DMA_PACKETIZATION_SIZE bytes (the last one shorter).
// The copy itself stays one memcpy: packets are counted from the size,
// never made, so a copy costs the same whether a profile is captured or not.
// Dynamic DMA (DGE) rings move the data-dependent bytes of gather, scatter
// and dynamic (update-)slice instructions; their notifications
// (NEURON_RT_ENABLE_DGE_NOTIFICATIONS) name the ring.
#ifndef NEURON_LIB_PROFILE_DMA_H_
#define NEURON_LIB_PROFILE_DMA_H_

#include <cstdint>
#include <string>

#include "lib/config/config.h"
#include "nlohmann/json.hpp"

namespace neuron::profile {

enum class DmaQueue { kHostToDevice, kDeviceToHost };

// DGE rings per core: a DGE instruction uses ring (its index among the
// module's DGE instructions) % this.
inline constexpr int kDgeRings = 4;

// "h2d" / "d2h".
const char* DmaQueueName(DmaQueue queue);

// Packets a copy of `bytes` takes: ceil(bytes / packet_bytes); 0 for 0 bytes.
uint64_t DmaPackets(uint64_t bytes, uint64_t packet_bytes);

// A span's args for a copy: bytes, queue, packets, packet_bytes.
nlohmann::json DmaArgs(const char* queue, uint64_t bytes, uint64_t packet_bytes);

// A copy outside an execution (a tensor read or write, a model's weights),
// for the session device profiles (Profiler::RecordDmaAll).
struct DmaTransfer {
  int device = 0;
  int core = 0;
  std::string name;  // "write tensor 'x'", "weights of model 'm'"
  DmaQueue queue = DmaQueue::kHostToDevice;
  uint64_t bytes = 0;
  int64_t begin_ns = 0, end_ns = 0;
};

}  // namespace neuron::profile

#endif  // NEURON_LIB_PROFILE_DMA_H_
