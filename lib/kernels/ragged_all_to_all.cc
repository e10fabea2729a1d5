#include "lib/kernels/ragged_all_to_all.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/kernels/element_convert.h"

namespace neuron::kernels {
namespace {

// Every member's copy of `b`'s bytes, in group order (this member's own
// when the group is one).
absl::Status GatherAll(CollectiveOps* coll, const CollectiveCall& call, int64_t group_size, const Buf& b,
                       std::vector<uint8_t>& all) {
  all.resize(b.bytes * group_size + 1);
  if (group_size == 1) {
    if (b.bytes) std::memcpy(all.data(), b.data, b.bytes);
    return absl::OkStatus();
  }
  CollectiveCall c = call;
  c.type = b.type;
  return coll->AllGather(c, b.data, all.data(), b.bytes);
}

}  // namespace

absl::Status RaggedAllToAll(CollectiveOps* coll, const CollectiveCall& call, int64_t position, int64_t group_size,
                            const RaggedAllToAllOperands& in, Buf& out) {
  const int64_t peers = in.input_offsets->count;
  // The wording of the other collectives' one-device error, which
  // neuron-exec's users (and the corpus test) act on.
  if (group_size == 1 && peers > 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ragged-all-to-all needs several devices but runs on one (its offset arrays name ", peers,
        " peers: run it as a job of ", peers, " ranks, e.g. neuron-exec -r ", peers, ")"));
  }
  if (peers != group_size) {
    return absl::FailedPreconditionError(absl::StrCat("ragged-all-to-all's offset arrays name ", peers,
                                                      " peers but its replica group has ", group_size, " members"));
  }
  if (group_size > 1 && coll == nullptr) {
    return absl::FailedPreconditionError("ragged-all-to-all across several devices needs the collectives engine");
  }
  if (out.data != in.output->data && out.bytes) std::memcpy(out.data, in.output->data, out.bytes);
  const int64_t in_rows = in.input->rank() ? in.input->dims[0] : 1;
  const int64_t out_rows = out.rank() ? out.dims[0] : 1;
  const int64_t row_bytes = in_rows ? in.input->bytes / in_rows : 0;

  std::vector<uint8_t> inputs, input_offsets, send_sizes, output_offsets;
  for (auto [buf, all] : {std::pair{in.input, &inputs}, {in.input_offsets, &input_offsets},
                          {in.send_sizes, &send_sizes}, {in.output_offsets, &output_offsets}}) {
    if (absl::Status s = GatherAll(coll, call, group_size, *buf, *all); !s.ok()) return s;
  }
  const hlo::ElementType index_type = in.input_offsets->type;
  for (int64_t sender = 0; sender < group_size; ++sender) {
    // What `sender` addresses to this member: entry `position` of its arrays.
    const int64_t at = sender * peers + position;
    const int64_t from = LoadInt(index_type, input_offsets.data(), at);
    const int64_t rows = LoadInt(in.send_sizes->type, send_sizes.data(), at);
    const int64_t to = LoadInt(in.output_offsets->type, output_offsets.data(), at);
    if (rows < 0 || from < 0 || to < 0 || from > in_rows - rows || to > out_rows - rows) {
      return absl::OutOfRangeError(absl::StrCat("ragged-all-to-all: member ", sender, " sends ", rows,
                                                " rows from row ", from, " of ", in_rows, " to row ", to, " of ",
                                                out_rows));
    }
    if (rows)
      std::memcpy(out.data + to * row_bytes, inputs.data() + sender * in.input->bytes + from * row_bytes,
                  rows * row_bytes);
  }
  return absl::OkStatus();
}

}  // namespace neuron::kernels
