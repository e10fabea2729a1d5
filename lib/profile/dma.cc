#include "lib/profile/dma.h"

namespace neuron::profile {

const char* DmaQueueName(DmaQueue queue) {
  return queue == DmaQueue::kHostToDevice ? "h2d" : "d2h";
}

namespace {
// The configuration accepts 0; the engine cannot move empty packets.
uint64_t Effective(uint64_t packet_bytes) { return packet_bytes == 0 ? 1 : packet_bytes; }
}  // namespace

uint64_t DmaPackets(uint64_t bytes, uint64_t packet_bytes) {
  packet_bytes = Effective(packet_bytes);
  return bytes / packet_bytes + (bytes % packet_bytes != 0 ? 1 : 0);
}

nlohmann::json DmaArgs(const char* queue, uint64_t bytes, uint64_t packet_bytes) {
  return {{"bytes", bytes},
          {"queue", queue},
          {"packets", DmaPackets(bytes, packet_bytes)},
          {"packet_bytes", Effective(packet_bytes)}};
}

}  // namespace neuron::profile
