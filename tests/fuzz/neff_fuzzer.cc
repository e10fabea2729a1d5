// libFuzzer target for the NEFF reader: any bytes, read with and without
// hash validation, as a package, as a bare tar and as compressed streams.
// Nothing may crash, hang or allocate without bound.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lib/neff/compression.h"
#include "lib/neff/neff.h"
#include "lib/neff/tar.h"

namespace {

// Reads every member byte so a bad view is caught by ASan.
unsigned Touch(const neff::Package& package) {
  unsigned sum = 0;
  for (const neff::Entry& entry : package.entries) {
    for (char c : entry.data) sum += static_cast<unsigned char>(c);
  }
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  constexpr uint64_t kLimit = 16 << 20;  // keep bombs cheap
  volatile unsigned sink = 0;
  for (bool validate : {false, true}) {
    neff::ReadOptions options;
    options.validate_hash = validate;
    options.max_payload_bytes = kLimit;
    absl::StatusOr<neff::Package> package = neff::Read(bytes, options);
    if (package.ok()) sink = sink + Touch(*package);
  }
  neff::ReadOptions inspect = neff::InspectOptions();
  inspect.max_payload_bytes = kLimit;
  absl::StatusOr<neff::Package> any = neff::Read(bytes, inspect);
  if (any.ok()) sink = sink + Touch(*any);
  (void)neff::ReadHeaderOnly(bytes);
  (void)neff::ParseTar(bytes);
  (void)neff::DecompressZstd(bytes, kLimit);
  (void)neff::InflateGzip(bytes, kLimit);
  return 0;
}
