// Helpers for the kernel tests: build an executable from HLO text, make
// input tensors from values, read outputs back as doubles.
#ifndef NEURON_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
#define NEURON_TESTS_KERNELS_KERNEL_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/kernels/executable.h"

namespace neuron::kernels::testing {

// Loads, verifies and builds; the status says which step failed.
absl::StatusOr<std::unique_ptr<Executable>> BuildText(const std::string& hlo_text);

// A tensor of `type` with values converted from doubles.
Tensor MakeTensor(hlo::ElementType type, std::vector<int64_t> dims,
                  const std::vector<double>& values);
// Every element as a double.
std::vector<double> Values(const Tensor& t);

// Builds a loaded module and runs it once; returns the outputs.
absl::StatusOr<std::vector<Tensor>> RunModule(const hlo::Module& module,
                                              const std::vector<Tensor>& inputs,
                                              const ExecOptions& options = {},
                                              RunStats* stats = nullptr);

// Loads, verifies, builds and runs once; returns the outputs.
absl::StatusOr<std::vector<Tensor>> RunText(const std::string& hlo_text,
                                            const std::vector<Tensor>& inputs,
                                            const ExecOptions& options = {},
                                            RunStats* stats = nullptr);

}  // namespace neuron::kernels::testing

#endif  // NEURON_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
