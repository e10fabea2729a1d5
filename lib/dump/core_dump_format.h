// The core-dump file layout (man/neuron-core-dump.5): one zstd frame whose
// content is
//   magic "NCDUMP\0\1" (8 bytes), u32 version (1), u32 section count,
//   then per section: u32 kind, u32 meta length, u64 data length,
//                     meta (UTF-8 JSON object), data (raw bytes)
// all little-endian. Kinds: 1 info (data empty; meta holds the failure,
// the model and the program position), 2 buffer (meta: role, name,
// position, dtype, shape, bytes, stored; data: the first `stored` bytes,
// C order), 3 memlog (data: the log ring, text). Readers skip unknown kinds.
#ifndef NEURON_LIB_DUMP_CORE_DUMP_FORMAT_H_
#define NEURON_LIB_DUMP_CORE_DUMP_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron::dump {

inline constexpr char kCoreDumpMagic[8] = {'N', 'C', 'D', 'U', 'M', 'P', '\0', '\1'};
inline constexpr uint32_t kCoreDumpVersion = 1;
// Most bytes a dump may inflate to when read (bad input never exhausts memory).
inline constexpr uint64_t kMaxCoreDumpBytes = 4ull << 30;

enum class SectionKind : uint32_t { kInfo = 1, kBuffer = 2, kMemlog = 3 };

struct Section {
  SectionKind kind = SectionKind::kInfo;
  nlohmann::json meta = nlohmann::json::object();
  std::string data;
};

// Serializes and compresses.
absl::StatusOr<std::string> EncodeCoreDump(const std::vector<Section>& sections);
// Decompresses and parses; errors say what is wrong (name prefixes them).
// A dump inflating beyond `max_bytes` is refused before it is held whole
// (a few bytes of zstd can claim gigabytes); sections whose lengths exceed
// what the inflated bytes hold are refused before anything is copied.
absl::StatusOr<std::vector<Section>> DecodeCoreDump(std::string_view bytes, std::string_view name,
                                                    uint64_t max_bytes = kMaxCoreDumpBytes);
// True when the bytes start with a zstd frame (a core dump candidate).
bool LooksLikeZstd(std::string_view bytes);

}  // namespace neuron::dump

#endif  // NEURON_LIB_DUMP_CORE_DUMP_FORMAT_H_
