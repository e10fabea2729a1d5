// Protocol-buffer wire format appended to a string: varints, tags and
// length-delimited fields. Enough for a writer that knows its messages'
// layout (lib/profile/pftrace_encoder.cc) and must not build a message
// object per event: millions of spans are encoded straight into bytes.
#ifndef NEURON_LIB_PROFILE_PROTO_WIRE_H_
#define NEURON_LIB_PROFILE_PROTO_WIRE_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace neuron::profile::wire {

enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

inline void Varint(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

inline void Tag(std::string* out, int field, WireType type) {
  Varint(out, (static_cast<uint64_t>(field) << 3) | type);
}

// uint32/uint64/bool/enum fields.
inline void Unsigned(std::string* out, int field, uint64_t value) {
  Tag(out, field, kVarint);
  Varint(out, value);
}

// int32/int64 fields (not sint): negative values take ten bytes, as the
// format says.
inline void Signed(std::string* out, int field, int64_t value) {
  Unsigned(out, field, static_cast<uint64_t>(value));
}

inline void Double(std::string* out, int field, double value) {
  Tag(out, field, kFixed64);
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(bits >> (8 * i)));
}

// string/bytes fields and embedded messages already encoded.
inline void Bytes(std::string* out, int field, std::string_view bytes) {
  Tag(out, field, kLengthDelimited);
  Varint(out, bytes.size());
  out->append(bytes.data(), bytes.size());
}

}  // namespace neuron::profile::wire

#endif  // NEURON_LIB_PROFILE_PROTO_WIRE_H_
