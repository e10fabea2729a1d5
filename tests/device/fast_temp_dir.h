// Temporary directories for tests that build device trees. A trn2.48xlarge
// tree is ~13k small files and directories; on this machine's ext4 (mounted
// with discard) creating and unlinking them takes seconds, on tmpfs a blink.
// So these tests prefer /dev/shm, unless TMPDIR says otherwise.
#ifndef NEURON_TESTS_DEVICE_FAST_TEMP_DIR_H_
#define NEURON_TESTS_DEVICE_FAST_TEMP_DIR_H_

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tests/support/tool_runner.h"

namespace neuron::testing {

inline std::string FastTempDir() {
  static const bool chosen = [] {
    if (std::getenv("TMPDIR") == nullptr && access("/dev/shm", W_OK) == 0) {
      setenv("TMPDIR", "/dev/shm", 0);
    }
    return true;
  }();
  (void)chosen;
  return MakeTempDir();
}

}  // namespace neuron::testing

#endif  // NEURON_TESTS_DEVICE_FAST_TEMP_DIR_H_
