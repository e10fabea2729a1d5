// Tensors and tensor sets: allocation (device, host, empty), caller
// buffers, slices, reads/writes (single and batched), memset, copy, the
// address and placement of a tensor, and output completion.
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "lib/log/log.h"
#include "lib/nrt/api_state.h"
#include "lib/runtime/core.h"
#include "lib/runtime/observe.h"
#include "lib/support/checked_size.h"
#include "nrt/nrt_tools_ext.h"

namespace neuron::nrt_api {
namespace {

using runtime::TensorBuffer;

// The tensor's storage, or a failure naming the function.
NRT_STATUS Storage(const char* function, const nrt_tensor_t* tensor, TensorBuffer** out) {
  if (tensor == nullptr) return Fail(NRT_INVALID_HANDLE, absl::StrFormat("%s: null tensor", function));
  *out = tensor->buffer();
  if (*out == nullptr) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: tensor '%s' has no storage (attach a buffer first)", function,
                                tensor->name));
  }
  return NRT_SUCCESS;
}

NRT_STATUS CheckRange(const char* function, const TensorBuffer& t, uint64_t offset, uint64_t size) {
  if (!neuron::RangeWithin(offset, size, t.size())) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: %d bytes at offset %d is outside tensor '%s' (%d bytes)",
                                             function, size, offset, t.name(), t.size()));
  }
  return NRT_SUCCESS;
}

nrt_tensor* NewTensor(std::string name, nrt_tensor_placement_t placement) {
  auto* t = new nrt_tensor;
  t->name = std::move(name);
  t->placement = placement;
  TrackTensor(t);
  return t;
}

NRT_STATUS RunBatches(const char* function, const nrt_tensor_batch_t* batches,
                      uint64_t num_batches, bool write) {
  if (batches == nullptr && num_batches > 0) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: null batch array", function));
  }
  for (uint64_t b = 0; b < num_batches; ++b) {
    TensorBuffer* t = nullptr;
    if (NRT_STATUS s = Storage(function, batches[b].tensor, &t); s != NRT_SUCCESS) return s;
    if (batches[b].ops == nullptr && batches[b].num_ops > 0) {
      return Fail(NRT_INVALID, absl::StrFormat("%s: batch %d has a null operation array", function, b));
    }
    for (uint32_t i = 0; i < batches[b].num_ops; ++i) {
      const nrt_tensor_batch_op_t& op = batches[b].ops[i];
      if (op.buffer == nullptr && op.size > 0) {
        return Fail(NRT_INVALID,
                    absl::StrFormat("%s: batch %d operation %d has a null buffer", function, b, i));
      }
      if (NRT_STATUS s = CheckRange(function, *t, op.offset, op.size); s != NRT_SUCCESS) return s;
      char* at = static_cast<char*>(t->data()) + op.offset;
      if (op.size == 0) continue;
      runtime::TensorOpScope trace(write ? "tensor_write" : "tensor_read", t, nullptr, op.size);
      if (write) {
        std::memcpy(at, op.buffer, op.size);
      } else {
        std::memcpy(op.buffer, at, op.size);
      }
    }
  }
  return NRT_SUCCESS;
}

}  // namespace
}  // namespace neuron::nrt_api

using namespace neuron::nrt_api;  // NOLINT: the C API is this file's whole job
using neuron::runtime::TensorBuffer;

extern "C" {

NRT_STATUS nrt_tensor_allocate(nrt_tensor_placement_t placement, int vnc, size_t size,
                               const char* name, nrt_tensor_t** tensor) {
  if (tensor == nullptr) return Fail(NRT_INVALID, "nrt_tensor_allocate: null tensor pointer");
  std::string tensor_name = name != nullptr ? name : "";
  // A C caller may pass any int: read it as one, since loading a value
  // outside the enum's range as the enum is undefined.
  int raw_placement = 0;
  static_assert(sizeof(placement) == sizeof(raw_placement));
  std::memcpy(&raw_placement, &placement, sizeof raw_placement);
  switch (raw_placement) {
    // Both are host memory: VIRTUAL is what libnrt documents for host-side
    // tensors, HOST its deprecated DMA-able variant.
    case NRT_TENSOR_PLACEMENT_HOST:
    case NRT_TENSOR_PLACEMENT_VIRTUAL: {
      absl::StatusOr<std::unique_ptr<TensorBuffer>> buffer =
          TensorBuffer::AllocateHost(size, tensor_name);
      if (!buffer.ok()) return Fail("nrt_tensor_allocate", buffer.status());
      nrt_tensor* t = NewTensor(std::move(tensor_name), placement);
      t->storage = std::move(*buffer);
      *tensor = t;
      return NRT_SUCCESS;
    }
    case NRT_TENSOR_PLACEMENT_DEVICE: {
      RuntimeRef rt("nrt_tensor_allocate");
      if (!rt.ok()) return rt.status();
      int core = 0;
      if (NRT_STATUS s = CoreOfVnc("nrt_tensor_allocate", *rt, vnc, &core); s != NRT_SUCCESS) {
        return s;
      }
      absl::StatusOr<std::unique_ptr<TensorBuffer>> buffer =
          rt->AllocateTensor(core, size, tensor_name);
      if (!buffer.ok()) return Fail("nrt_tensor_allocate", buffer.status());
      nrt_tensor* t = NewTensor(std::move(tensor_name), placement);
      t->storage = std::move(*buffer);
      neuron::runtime::ObserveDeviceMemory(*t->storage, /*alloc=*/true);
      *tensor = t;
      return NRT_SUCCESS;
    }
  }
  return Fail(NRT_INVALID, absl::StrFormat("nrt_tensor_allocate: unknown placement %d", raw_placement));
}

NRT_STATUS nrt_tensor_allocate_empty(const char* name, nrt_tensor_t** tensor) {
  if (tensor == nullptr) return Fail(NRT_INVALID, "nrt_tensor_allocate_empty: null tensor pointer");
  *tensor = NewTensor(name != nullptr ? name : "", NRT_TENSOR_PLACEMENT_VIRTUAL);
  return NRT_SUCCESS;
}

void nrt_tensor_free(nrt_tensor_t** tensor) {
  if (tensor == nullptr || *tensor == nullptr) return;
  UntrackTensor(*tensor);
  {
    // Device storage goes back to its core's arena: keep the runtime.
    std::shared_lock<RuntimeLock> lock(RuntimeMutex());
    if ((*tensor)->storage != nullptr && (*tensor)->storage.use_count() == 1) {
      neuron::runtime::ObserveDeviceMemory(*(*tensor)->storage, /*alloc=*/false);
    }
    delete *tensor;
  }
  *tensor = nullptr;
}

NRT_STATUS nrt_tensor_attach_buffer(nrt_tensor_t* tensor, void* buffer, size_t size) {
  if (tensor == nullptr) return Fail(NRT_INVALID_HANDLE, "nrt_tensor_attach_buffer: null tensor");
  if (buffer == nullptr && size > 0) {
    return Fail(NRT_INVALID, "nrt_tensor_attach_buffer: null buffer");
  }
  std::shared_lock<RuntimeLock> lock(RuntimeMutex());
  tensor->window.reset();
  tensor->storage = TensorBuffer::View(buffer, size, tensor->name);
  tensor->placement = NRT_TENSOR_PLACEMENT_VIRTUAL;  // caller memory, whatever it was before
  return NRT_SUCCESS;
}

NRT_STATUS nrt_tensor_allocate_slice(const nrt_tensor_t* tensor_source, size_t offset, size_t size,
                                     const char* name, nrt_tensor_t** tensor_slice) {
  if (tensor_slice == nullptr) {
    return Fail(NRT_INVALID, "nrt_tensor_allocate_slice: null slice pointer");
  }
  TensorBuffer* source = nullptr;
  if (NRT_STATUS s = Storage("nrt_tensor_allocate_slice", tensor_source, &source); s != NRT_SUCCESS) {
    return s;
  }
  if (NRT_STATUS s = CheckRange("nrt_tensor_allocate_slice", *source, offset, size);
      s != NRT_SUCCESS) {
    return s;
  }
  nrt_tensor* t = NewTensor(name != nullptr ? name : tensor_source->name + "[slice]",
                            tensor_source->placement);
  t->storage = tensor_source->storage;  // keeps the bytes alive
  t->window = TensorBuffer::View(static_cast<char*>(source->data()) + offset, size, t->name,
                                 source->on_device() ? source->core() : nullptr, source);
  *tensor_slice = t;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_tensor_read(const nrt_tensor_t* tensor, void* buf, size_t offset, size_t size) {
  TensorBuffer* t = nullptr;
  if (NRT_STATUS s = Storage("nrt_tensor_read", tensor, &t); s != NRT_SUCCESS) return s;
  if (buf == nullptr && size > 0) return Fail(NRT_INVALID, "nrt_tensor_read: null buffer");
  if (NRT_STATUS s = CheckRange("nrt_tensor_read", *t, offset, size); s != NRT_SUCCESS) return s;
  neuron::runtime::TensorOpScope trace("tensor_read", t, nullptr, size);
  if (size > 0) std::memcpy(buf, static_cast<const char*>(std::as_const(*t).data()) + offset, size);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_tensor_write(nrt_tensor_t* tensor, const void* buf, size_t offset, size_t size) {
  TensorBuffer* t = nullptr;
  if (NRT_STATUS s = Storage("nrt_tensor_write", tensor, &t); s != NRT_SUCCESS) return s;
  if (buf == nullptr && size > 0) return Fail(NRT_INVALID, "nrt_tensor_write: null buffer");
  if (NRT_STATUS s = CheckRange("nrt_tensor_write", *t, offset, size); s != NRT_SUCCESS) return s;
  neuron::runtime::TensorOpScope trace("tensor_write", t, nullptr, size);
  if (size > 0) std::memcpy(static_cast<char*>(t->data()) + offset, buf, size);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_tensor_read_batch(const nrt_tensor_batch_t* batches, uint64_t num_batches,
                                 bool unsafe) {
  return RunBatches("nrt_tensor_read_batch", batches, num_batches, /*write=*/false);
}

NRT_STATUS nrt_tensor_write_batch(const nrt_tensor_batch_t* batches, uint64_t num_batches,
                                  bool unsafe) {
  return RunBatches("nrt_tensor_write_batch", batches, num_batches, /*write=*/true);
}

NRT_STATUS nrt_tensor_copy(const nrt_tensor_t* src, size_t src_offset, nrt_tensor_t* dst,
                           size_t dst_offset, size_t size) {
  TensorBuffer* from = nullptr;
  TensorBuffer* to = nullptr;
  if (NRT_STATUS s = Storage("nrt_tensor_copy", src, &from); s != NRT_SUCCESS) return s;
  if (NRT_STATUS s = Storage("nrt_tensor_copy", dst, &to); s != NRT_SUCCESS) return s;
  if (from->on_device() && to->on_device() && from->core_id() != to->core_id()) {
    return Fail(NRT_INVALID,
                absl::StrFormat("nrt_tensor_copy: device tensors '%s' (NeuronCore %d) and '%s' "
                                "(NeuronCore %d) are on different cores",
                                from->name(), from->core_id(), to->name(), to->core_id()));
  }
  if (NRT_STATUS s = CheckRange("nrt_tensor_copy", *from, src_offset, size); s != NRT_SUCCESS) {
    return s;
  }
  if (NRT_STATUS s = CheckRange("nrt_tensor_copy", *to, dst_offset, size); s != NRT_SUCCESS) {
    return s;
  }
  neuron::runtime::TensorOpScope trace("tensor_copy", to, from, size);
  // memmove: a tensor and its slice may overlap.
  if (size > 0) {
    std::memmove(static_cast<char*>(to->data()) + dst_offset,
                 static_cast<const char*>(from->data()) + src_offset, size);
  }
  return NRT_SUCCESS;
}

size_t nrt_tensor_get_size(const nrt_tensor_t* tensor) {
  if (tensor == nullptr || tensor->buffer() == nullptr) return 0;
  return tensor->buffer()->size();
}

NRT_STATUS nrt_tensor_memset(nrt_tensor_t* tensor, uint64_t offset, int value, size_t size) {
  TensorBuffer* t = nullptr;
  if (NRT_STATUS s = Storage("nrt_tensor_memset", tensor, &t); s != NRT_SUCCESS) return s;
  if (NRT_STATUS s = CheckRange("nrt_tensor_memset", *t, offset, size); s != NRT_SUCCESS) return s;
  neuron::runtime::TensorOpScope trace("tensor_memset", t, nullptr, size);
  if (size > 0) std::memset(static_cast<char*>(t->data()) + offset, value, size);
  return NRT_SUCCESS;
}

void* nrt_tensor_get_va(const nrt_tensor_t* tensor) {
  TensorBuffer* t = nullptr;
  if (Storage("nrt_tensor_get_va", tensor, &t) != NRT_SUCCESS) return nullptr;
  // The caller may write through the address at any time.
  t->MarkUntracked();
  return t->data();
}

NRT_STATUS nrt_tools_tensor_written(nrt_tensor_t* tensor) {
  TensorBuffer* t = nullptr;
  if (NRT_STATUS s = Storage("nrt_tools_tensor_written", tensor, &t); s != NRT_SUCCESS) return s;
  t->MarkTracked();
  return NRT_SUCCESS;
}

NRT_STATUS nrt_tensor_get_device_allocation_info(const nrt_tensor_t* tensor,
                                                 nrt_tensor_device_allocation_info_t* alloc_info) {
  TensorBuffer* t = nullptr;
  if (NRT_STATUS s = Storage("nrt_tensor_get_device_allocation_info", tensor, &t); s != NRT_SUCCESS) {
    return s;
  }
  if (alloc_info == nullptr) {
    return Fail(NRT_INVALID, "nrt_tensor_get_device_allocation_info: null info pointer");
  }
  const neuron::device::HbmBlock* block =
      tensor->storage != nullptr ? tensor->storage->block() : nullptr;
  if (!t->on_device() || block == nullptr) {
    return Fail(NRT_INVALID,
                absl::StrFormat("nrt_tensor_get_device_allocation_info: tensor '%s' is not in "
                                "device memory",
                                tensor->name));
  }
  // A slice reports its own start within the owner's block.
  const uint64_t start = block->offset + static_cast<uint64_t>(
      static_cast<const char*>(t->data()) - static_cast<const char*>(tensor->storage->data()));
  alloc_info->physical_address = start;
  alloc_info->size = tensor->window != nullptr ? t->size() : block->size;
  alloc_info->hbm_index = t->core()->placement().index_in_device;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_tensor_check_output_completion(const nrt_tensor_t* output_tensor, int64_t timeout,
                                              uint64_t expected_completion_count) {
  if (output_tensor == nullptr) {
    return Fail(NRT_INVALID, "nrt_tensor_check_output_completion: null tensor");
  }
  auto* t = const_cast<nrt_tensor*>(output_tensor);
  std::unique_lock<std::mutex> lock(t->completion_mu);
  auto done = [&] { return t->completions >= expected_completion_count; };
  if (timeout < 0) {
    // Unbounded: say so once if it takes long, as libnrt does.
    if (!t->completion_cv.wait_for(lock, std::chrono::seconds(30), done)) {
      NEURON_LOG(NRT, kWarn, "tensor '%s': still waiting for %d completion(s) after 30 s",
                 t->name, expected_completion_count);
      t->completion_cv.wait(lock, done);
    }
    return NRT_SUCCESS;
  }
  if (!t->completion_cv.wait_for(lock, std::chrono::microseconds(timeout), done)) {
    return Fail(NRT_TIMEOUT,
                absl::StrFormat("nrt_tensor_check_output_completion: tensor '%s' has %d of %d "
                                "completions after %d us",
                                t->name, t->completions, expected_completion_count, timeout));
  }
  return NRT_SUCCESS;
}

NRT_STATUS nrt_tensor_reset_output_completion(nrt_tensor_t* output_tensor) {
  if (output_tensor == nullptr) {
    return Fail(NRT_INVALID, "nrt_tensor_reset_output_completion: null tensor");
  }
  std::lock_guard<std::mutex> lock(output_tensor->completion_mu);
  output_tensor->completions = 0;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_allocate_tensor_set(nrt_tensor_set_t** result) {
  if (result == nullptr) return Fail(NRT_INVALID, "nrt_allocate_tensor_set: null result pointer");
  *result = new TensorSet();
  return NRT_SUCCESS;
}

void nrt_destroy_tensor_set(nrt_tensor_set_t** tensor_set) {
  if (tensor_set == nullptr || *tensor_set == nullptr) return;
  delete static_cast<TensorSet*>(*tensor_set);
  *tensor_set = nullptr;
}

NRT_STATUS nrt_add_tensor_to_tensor_set(nrt_tensor_set_t* tensor_set, const char* tensor_name,
                                        nrt_tensor_t* tensor) {
  if (tensor_set == nullptr || tensor_name == nullptr || tensor == nullptr) {
    return Fail(NRT_INVALID, "nrt_add_tensor_to_tensor_set: null set, name or tensor");
  }
  static_cast<TensorSet*>(tensor_set)->tensors[tensor_name] = tensor;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_tensor_from_tensor_set(nrt_tensor_set_t* tensor_set, const char* tensor_name,
                                          nrt_tensor_t** tensor) {
  if (tensor_set == nullptr || tensor_name == nullptr || tensor == nullptr) {
    return Fail(NRT_INVALID, "nrt_get_tensor_from_tensor_set: null set, name or result pointer");
  }
  const auto& tensors = static_cast<TensorSet*>(tensor_set)->tensors;
  auto it = tensors.find(tensor_name);
  if (it == tensors.end()) {  // NRT_FAILURE, as libnrt documents
    return Fail(NRT_FAILURE,
                absl::StrFormat("nrt_get_tensor_from_tensor_set: no tensor named '%s' in the set",
                                tensor_name));
  }
  *tensor = it->second;
  return NRT_SUCCESS;
}

}  // extern "C"
