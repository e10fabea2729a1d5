// Buffer assignment by liveness over the entry computation's schedule (its
// post order): every value gets a buffer, buffers whose lifetimes do not
// overlap share memory (first-fit into the lowest free offset), and the
// peak is the scratch the program needs besides inputs, outputs and
// constants. Values that are only views (parameters, constants,
// get-tuple-element, tuple, bitcast) take no scratch. A call, loop or
// conditional adds its callees' own peak (found the same way) for as long
// as it runs, so the peak covers nested computations too.
#ifndef NEURON_LIB_COMPILER_BUFFER_ASSIGNMENT_H_
#define NEURON_LIB_COMPILER_BUFFER_ASSIGNMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/hlo/module.h"
#include "lib/program/manifest.h"

namespace neuron::compiler {

struct BufferSlot {
  const hlo::Instruction* instruction;
  int64_t offset = 0;
  int64_t size = 0;
  size_t defined_at = 0;   // schedule position
  size_t last_use = 0;     // schedule position of the last reader
};

struct BufferAssignment {
  std::vector<BufferSlot> slots;  // scratch buffers, in schedule order
  program::MemoryPlan memory;
};

// Element bytes of a shape, tuples summed; 0 on overflow or for tokens.
int64_t ShapeBytes(const hlo::Shape& shape);

BufferAssignment AssignBuffers(const hlo::Module& module);

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_BUFFER_ASSIGNMENT_H_
