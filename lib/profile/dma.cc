#include "lib/profile/dma.h"

namespace neuron::profile {

const char* DmaQueueName(DmaQueue queue) {
  return queue == DmaQueue::kHostToDevice ? "h2d" : "d2h";
}

uint64_t DmaPackets(uint64_t bytes, uint64_t packet_bytes) {
  if (packet_bytes == 0) packet_bytes = 1;  // config resolution never gives 0
  return bytes / packet_bytes + (bytes % packet_bytes != 0 ? 1 : 0);
}

nlohmann::json DmaArgs(const char* queue, uint64_t bytes, uint64_t packet_bytes) {
  return {{"bytes", bytes},
          {"queue", queue},
          {"packets", DmaPackets(bytes, packet_bytes)},
          {"packet_bytes", packet_bytes}};
}

}  // namespace neuron::profile
