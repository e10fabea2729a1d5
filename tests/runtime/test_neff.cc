#include "tests/runtime/test_neff.h"

#include <cstring>
#include <deque>
#include <fstream>

#include "absl/strings/str_format.h"
#include "lib/hlo/load.h"
#include "lib/neff/header.h"
#include "lib/neff/neff.h"
#include "lib/program/dtype.h"
#include "lib/program/package.h"

namespace neuron::testing {

absl::StatusOr<std::string> BuildTestNeff(const std::string& hlo_text,
                                          const TestNeffOptions& options) {
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::LoadModule(hlo_text, "test.hlo");
  if (!module.ok()) return module.status();
  program::SerializeInput input;
  input.module = module->get();
  input.input_hlo_text = hlo_text;
  input.page_align_constants = options.fast_loading;
  program::Manifest& m = input.manifest;
  m.name = (*module)->name();
  m.target = options.target;
  m.lnc = options.lnc;
  m.fast_loading = options.fast_loading;
  const hlo::Computation* entry = (*module)->entry();
  for (size_t i = 0; i < entry->parameters().size(); ++i) {
    const hlo::Instruction* p = entry->parameter(i);
    program::TensorInfo t;
    t.name = p->name();
    t.index = static_cast<int64_t>(i);
    t.parameter = static_cast<int64_t>(i);
    t.type = p->shape().type;
    t.dims = p->shape().dims;
    t.size = *program::ArrayBytes(p->shape());
    m.memory.inputs += t.size;
    m.inputs.push_back(t);
  }
  std::vector<hlo::Shape> leaves;
  const hlo::Shape& root = entry->root()->shape();
  if (root.IsTuple()) {
    leaves = root.tuple;
  } else {
    leaves = {root};
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    program::TensorInfo t;
    // As the compiler names them: a single result after the root.
    t.name = root.IsTuple() ? absl::StrFormat("output%d", i) : entry->root()->name();
    t.index = static_cast<int64_t>(i);
    t.type = leaves[i].type;
    t.dims = leaves[i].dims;
    t.size = *program::ArrayBytes(leaves[i]);
    m.memory.outputs += t.size;
    m.outputs.push_back(t);
  }
  std::deque<std::string> storage;
  absl::StatusOr<std::vector<neff::Member>> members = program::Serialize(input, &storage);
  if (!members.ok()) return members.status();
  neff::WriteOptions write;
  write.name = m.name;
  write.lnc_size = options.lnc;
  write.fast_loading = options.fast_loading;
  write.zstd_frame_bytes = options.zstd_frame_bytes;
  absl::StatusOr<std::string> bytes = neff::Write(*members, write);
  if (!bytes.ok()) return bytes.status();
  if (options.version_major != 0) {
    // The hash covers the payload only, so the header can be patched.
    std::memcpy(bytes->data() + neff::kOffVersionMajor, &options.version_major, 8);
  }
  return bytes;
}

std::string WriteTestFile(const std::string& dir, const std::string& name,
                          const std::string& bytes) {
  const std::string path = dir + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

}  // namespace neuron::testing
