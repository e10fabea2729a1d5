// Independent builders for test inputs: raw ustar blocks (so tests can make
// archives the library's writer refuses to make) and gzip streams.
#ifndef NEURON_TESTS_NEFF_TEST_ARCHIVES_H_
#define NEURON_TESTS_NEFF_TEST_ARCHIVES_H_

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace neff_test {

struct RawMember {
  std::string name;
  char type = '0';
  std::string data;
  std::string prefix;
  bool corrupt_checksum = false;
};

inline void PutOctal(std::string& block, size_t offset, size_t width, uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%0*llo", static_cast<int>(width - 1),
                static_cast<unsigned long long>(value));
  block.replace(offset, width - 1, buf);
}

// One ustar header block, written from the POSIX field table.
inline std::string RawHeader(const RawMember& m) {
  std::string block(512, '\0');
  block.replace(0, std::min<size_t>(m.name.size(), 100), m.name.substr(0, 100));
  PutOctal(block, 100, 8, 0644);
  PutOctal(block, 108, 8, 0);
  PutOctal(block, 116, 8, 0);
  PutOctal(block, 124, 12, m.data.size());
  PutOctal(block, 136, 12, 0);
  block[156] = m.type;
  block.replace(257, 8, std::string("ustar\0" "00", 8));
  block.replace(345, m.prefix.size(), m.prefix);
  block.replace(148, 8, "        ");
  unsigned sum = 0;
  for (unsigned char c : block) sum += c;
  if (m.corrupt_checksum) sum += 1;
  char chk[8];
  std::snprintf(chk, sizeof(chk), "%06o", sum);
  block.replace(148, 6, chk);
  block[154] = '\0';
  return block;
}

inline std::string RawTar(const std::vector<RawMember>& members, bool end_marker = true) {
  std::string out;
  for (const RawMember& m : members) {
    out += RawHeader(m);
    out += m.data;
    out.append((512 - m.data.size() % 512) % 512, '\0');
  }
  if (end_marker) out.append(1024, '\0');
  return out;
}

inline std::string Gzip(const std::string& input) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, input.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  zs.avail_in = static_cast<uInt>(input.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

inline void PutLe(std::string& bytes, size_t offset, uint64_t value, int width) {
  for (int i = 0; i < width; ++i) bytes[offset + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

inline uint64_t GetLe(const std::string& bytes, size_t offset, int width) {
  uint64_t value = 0;
  for (int i = 0; i < width; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return value;
}

}  // namespace neff_test

#endif  // NEURON_TESTS_NEFF_TEST_ARCHIVES_H_
