#include "tests/stress/stress_worker.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/str_format.h"

namespace neuron::stress {
namespace {

constexpr size_t kTensorBytes = 4096;
constexpr size_t kIoBytes = kElements * sizeof(float);
constexpr size_t kWrap = SIZE_MAX - 15;  // 16 + kWrap wraps to 0
// An asynchronous request that takes this long is a hang.
constexpr auto kHang = std::chrono::seconds(60);

}  // namespace

std::string AddModelHlo() {
  return absl::StrFormat(R"(HloModule stress_add
ENTRY main {
  x = f32[%d] parameter(0)
  y = f32[%d] parameter(1)
  ROOT sum = f32[%d] add(x, y)
}
)",
                         kElements, kElements, kElements);
}

void Report::Fail(std::string line) {
  std::lock_guard<std::mutex> lock(mu);
  if (failures.size() < 20) failures.push_back(std::move(line));
}

Worker::Worker(uint64_t seed, int vnc, nrt_model_t* model, const std::string* neff,
               Report* report)
    : rng_(seed), seed_(seed), vnc_(vnc), model_(model), neff_(neff), report_(report) {}

Worker::~Worker() {
  nrta_error_tracker_destroy(tracker_);
  nrt_destroy_tensor_set(&ins_);
  nrt_destroy_tensor_set(&outs_);
  for (nrt_tensor_t** t : {&x_, &y_, &sum_}) nrt_tensor_free(t);
  for (Shadowed& s : tensors_) nrt_tensor_free(&s.tensor);
}

void Worker::Check(bool ok, const std::string& what) {
  if (!ok) {
    report_->Fail(absl::StrFormat("seed %d step %d (vnc %d): %s", seed_, step_, vnc_, what));
  }
}

void Worker::Expect(NRT_STATUS got, NRT_STATUS want, const char* call) {
  Check(got == want, absl::StrFormat("%s returned %d, want %d (%s)", call, got, want,
                                     got == NRT_SUCCESS ? "" : nrt_get_last_error()));
}

void Worker::Count(bool invalid) {
  std::lock_guard<std::mutex> lock(report_->mu);
  ++report_->calls;
  if (invalid) ++report_->invalid_calls;
}

bool Worker::Setup() {
  const nrt_tensor_placement_t placements[] = {
      NRT_TENSOR_PLACEMENT_DEVICE, NRT_TENSOR_PLACEMENT_DEVICE, NRT_TENSOR_PLACEMENT_HOST,
      NRT_TENSOR_PLACEMENT_VIRTUAL};
  for (nrt_tensor_placement_t p : placements) {
    Shadowed s;
    Expect(nrt_tensor_allocate(p, vnc_, kTensorBytes, "stress", &s.tensor), NRT_SUCCESS,
           "nrt_tensor_allocate");
    if (s.tensor == nullptr) return false;
    // Fresh tensors' bytes are the runtime's to choose: take them as the
    // starting shadow.
    s.shadow.resize(kTensorBytes);
    Expect(nrt_tensor_read(s.tensor, s.shadow.data(), 0, kTensorBytes), NRT_SUCCESS,
           "nrt_tensor_read");
    tensors_.push_back(std::move(s));
  }
  for (auto [t, name] : {std::pair{&x_, "x"}, {&y_, "y"}, {&sum_, "sum"}}) {
    Expect(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, vnc_, kIoBytes, name, t),
           NRT_SUCCESS, "nrt_tensor_allocate");
    if (*t == nullptr) return false;
  }
  Expect(nrt_allocate_tensor_set(&ins_), NRT_SUCCESS, "nrt_allocate_tensor_set");
  Expect(nrt_allocate_tensor_set(&outs_), NRT_SUCCESS, "nrt_allocate_tensor_set");
  if (ins_ == nullptr || outs_ == nullptr) return false;
  Expect(nrt_add_tensor_to_tensor_set(ins_, "x", x_), NRT_SUCCESS, "nrt_add_tensor_to_tensor_set");
  Expect(nrt_add_tensor_to_tensor_set(ins_, "y", y_), NRT_SUCCESS, "nrt_add_tensor_to_tensor_set");
  Expect(nrt_add_tensor_to_tensor_set(outs_, "sum", sum_), NRT_SUCCESS,
         "nrt_add_tensor_to_tensor_set");
  Expect(nrta_error_tracker_create(static_cast<uint32_t>(vnc_), &tracker_), NRT_SUCCESS,
         "nrta_error_tracker_create");
  return tracker_ != nullptr;
}

void Worker::Step() {
  ++step_;
  switch (Below(20)) {
    case 0: case 1: case 2: Write(); break;
    case 3: case 4: case 5: Read(); break;
    case 6: case 7: Copy(); break;
    case 8: Memset(); break;
    case 9: case 10: Slice(); break;
    case 11: case 12: case 13: ExecuteSync(model_); break;
    case 14: case 15: ExecuteAsync(); break;
    case 16: LoadRunUnload(); break;
    default: Invalid(); break;
  }
}

void Worker::Write() {
  Shadowed& s = AnyTensor();
  const size_t offset = Below(kTensorBytes);
  const size_t size = Below(kTensorBytes - offset + 1);
  std::vector<uint8_t> bytes(size);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng_());
  Expect(nrt_tensor_write(s.tensor, bytes.data(), offset, size), NRT_SUCCESS, "nrt_tensor_write");
  std::copy(bytes.begin(), bytes.end(), s.shadow.begin() + static_cast<ptrdiff_t>(offset));
  Count(false);
}

void Worker::Read() {
  Shadowed& s = AnyTensor();
  const size_t offset = Below(kTensorBytes);
  const size_t size = Below(kTensorBytes - offset + 1);
  std::vector<uint8_t> got(size);
  Expect(nrt_tensor_read(s.tensor, got.data(), offset, size), NRT_SUCCESS, "nrt_tensor_read");
  Check(std::equal(got.begin(), got.end(), s.shadow.begin() + static_cast<ptrdiff_t>(offset)),
        absl::StrFormat("nrt_tensor_read of %d bytes at %d differs from its shadow", size, offset));
  Count(false);
}

void Worker::Copy() {
  Shadowed& from = AnyTensor();
  Shadowed& to = AnyTensor();
  const size_t size = Below(kTensorBytes + 1);
  const size_t src = Below(kTensorBytes - size + 1), dst = Below(kTensorBytes - size + 1);
  Expect(nrt_tensor_copy(from.tensor, src, to.tensor, dst, size), NRT_SUCCESS, "nrt_tensor_copy");
  // memmove: the same tensor may be both.
  std::memmove(to.shadow.data() + dst, from.shadow.data() + src, size);
  Count(false);
}

void Worker::Memset() {
  Shadowed& s = AnyTensor();
  const size_t offset = Below(kTensorBytes);
  const size_t size = Below(kTensorBytes - offset + 1);
  const int value = static_cast<int>(Below(256));
  Expect(nrt_tensor_memset(s.tensor, offset, value, size), NRT_SUCCESS, "nrt_tensor_memset");
  std::memset(s.shadow.data() + offset, value, size);
  Count(false);
}

// A slice reads and writes its window of the owner.
void Worker::Slice() {
  Shadowed& s = AnyTensor();
  const size_t offset = Below(kTensorBytes);
  const size_t size = 1 + Below(kTensorBytes - offset);
  nrt_tensor_t* slice = nullptr;
  Expect(nrt_tensor_allocate_slice(s.tensor, offset, size, "slice", &slice), NRT_SUCCESS,
         "nrt_tensor_allocate_slice");
  if (slice == nullptr) return;
  Check(nrt_tensor_get_size(slice) == size, "nrt_tensor_get_size of a slice");
  const size_t at = Below(size);
  const uint8_t byte = static_cast<uint8_t>(rng_());
  Expect(nrt_tensor_write(slice, &byte, at, 1), NRT_SUCCESS, "nrt_tensor_write (slice)");
  s.shadow[offset + at] = byte;
  std::vector<uint8_t> got(size);
  Expect(nrt_tensor_read(slice, got.data(), 0, size), NRT_SUCCESS, "nrt_tensor_read (slice)");
  Check(std::equal(got.begin(), got.end(), s.shadow.begin() + static_cast<ptrdiff_t>(offset)),
        "a slice's bytes differ from its owner's shadow");
  Expect(nrt_tensor_write(slice, &byte, size, 1), NRT_INVALID, "nrt_tensor_write past a slice");
  nrt_tensor_free(&slice);
  Count(false);
}

void Worker::FillInputs(std::vector<float>* x, std::vector<float>* y) {
  std::uniform_real_distribution<float> value(-1000, 1000);
  x->resize(kElements);
  y->resize(kElements);
  for (int i = 0; i < kElements; ++i) {
    (*x)[i] = value(rng_);
    (*y)[i] = value(rng_);
  }
}

void Worker::CheckSum(const std::vector<float>& x, const std::vector<float>& y,
                      const std::vector<float>& sum, const char* how) {
  for (int i = 0; i < kElements; ++i) {
    if (sum[i] != x[i] + y[i]) {
      Check(false, absl::StrFormat("%s execution: sum[%d] = %g, want %g", how, i, sum[i],
                                   x[i] + y[i]));
      return;
    }
  }
  std::lock_guard<std::mutex> lock(report_->mu);
  ++report_->executions;
}

void Worker::ExecuteSync(nrt_model_t* model) {
  std::vector<float> x, y, sum(kElements);
  FillInputs(&x, &y);
  Expect(nrt_tensor_write(x_, x.data(), 0, kIoBytes), NRT_SUCCESS, "nrt_tensor_write (x)");
  Expect(nrt_tensor_write(y_, y.data(), 0, kIoBytes), NRT_SUCCESS, "nrt_tensor_write (y)");
  const int repeat = 1 + static_cast<int>(Below(2));
  Expect(nrt_execute_repeat(model, ins_, outs_, repeat), NRT_SUCCESS, "nrt_execute_repeat");
  Expect(nrt_tensor_read(sum_, sum.data(), 0, kIoBytes), NRT_SUCCESS, "nrt_tensor_read (sum)");
  CheckSum(x, y, sum, "synchronous");
  Count(false);
}

bool Worker::WaitFor(nrta_seq_t seq, const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + kHang;
  for (;;) {
    bool done = false;
    if (nrta_is_completed(seq, &done) != NRT_SUCCESS) {
      Check(false, absl::StrFormat("nrta_is_completed (%s): %s", what, nrt_get_last_error()));
      return false;
    }
    if (done) return true;
    if (std::chrono::steady_clock::now() > deadline) {
      Check(false, absl::StrFormat("%s did not complete (a hang)", what));
      return false;
    }
    std::this_thread::yield();
  }
}

// Write, execute and read as queued requests; each waits for its producer.
void Worker::ExecuteAsync() {
  std::vector<float> x, y, sum(kElements);
  FillInputs(&x, &y);
  nrta_seq_t wx = 0, wy = 0, ex = 0, rd = 0;
  Expect(nrta_tensor_write(x_, x.data(), 0, kIoBytes, 0, tracker_, &wx), NRT_SUCCESS,
         "nrta_tensor_write");
  Expect(nrta_tensor_write(y_, y.data(), 0, kIoBytes, 0, tracker_, &wy), NRT_SUCCESS,
         "nrta_tensor_write");
  if (!WaitFor(wx, "nrta_tensor_write") || !WaitFor(wy, "nrta_tensor_write")) return;
  Expect(nrta_execute_schedule(model_, ins_, outs_, 0, tracker_, &ex), NRT_SUCCESS,
         "nrta_execute_schedule");
  if (!WaitFor(ex, "nrta_execute_schedule")) return;
  Expect(nrta_tensor_read(sum.data(), sum_, 0, kIoBytes, 1, tracker_, &rd), NRT_SUCCESS,
         "nrta_tensor_read");
  if (!WaitFor(rd, "nrta_tensor_read")) return;
  CheckSum(x, y, sum, "asynchronous");
  const nrta_error_t* list = nullptr;
  size_t count = 0;
  Expect(nrta_error_tracker_get_list(tracker_, &list, &count), NRT_SUCCESS,
         "nrta_error_tracker_get_list");
  Check(count == 0, absl::StrFormat("the error tracker holds %d errors", count));
  Count(false);
}

// A model of this worker's own on its core, run once and unloaded.
void Worker::LoadRunUnload() {
  nrt_model_t* model = nullptr;
  Expect(nrt_load(neff_->data(), neff_->size(), vnc_, -1, &model), NRT_SUCCESS, "nrt_load");
  if (model == nullptr) return;
  ExecuteSync(model);
  Expect(nrt_unload(model), NRT_SUCCESS, "nrt_unload");
  std::lock_guard<std::mutex> lock(report_->mu);
  ++report_->loads;
}

// One invalid call; its exact status, and nothing changed (the shadows are
// checked by later reads).
void Worker::Invalid() {
  Shadowed& s = AnyTensor();
  std::vector<uint8_t> buf(64, 0xa5);
  nrt_tensor_t* t = nullptr;
  switch (Below(10)) {
    case 0:
      Expect(nrt_tensor_write(s.tensor, buf.data(), 16, kWrap), NRT_INVALID,
             "nrt_tensor_write (wrapping)");
      break;
    case 1:
      Expect(nrt_tensor_read(s.tensor, buf.data(), kTensorBytes - 8, 16), NRT_INVALID,
             "nrt_tensor_read (past the end)");
      break;
    case 2:
      Expect(nrt_tensor_copy(s.tensor, 16, AnyTensor().tensor, 0, kWrap), NRT_INVALID,
             "nrt_tensor_copy (wrapping)");
      break;
    case 3:
      Expect(nrt_tensor_memset(s.tensor, kTensorBytes + 1, 0, 0), NRT_INVALID,
             "nrt_tensor_memset (offset past the end)");
      break;
    case 4:
      Expect(nrt_tensor_allocate_slice(s.tensor, 16, kWrap, "s", &t), NRT_INVALID,
             "nrt_tensor_allocate_slice (wrapping)");
      break;
    case 5:
      Expect(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, SIZE_MAX - Below(63), "huge", &t),
             NRT_RESOURCE, "nrt_tensor_allocate (SIZE_MAX)");
      break;
    case 6:
      Expect(nrt_execute_repeat(model_, ins_, outs_, -static_cast<int>(Below(3))), NRT_INVALID,
             "nrt_execute_repeat (count below 1)");
      break;
    case 7: {
      nrt_model_t* m = nullptr;
      Expect(nrt_load(neff_->data(), neff_->size(), -2 - static_cast<int32_t>(Below(100)), -1, &m),
             NRT_INVALID, "nrt_load (vnc below -1)");
      break;
    }
    case 8:
      Expect(nrt_get_tensor_from_tensor_set(ins_, "missing", &t), NRT_FAILURE,
             "nrt_get_tensor_from_tensor_set (unknown name)");
      break;
    default: {
      nrta_seq_t seq = 0;
      Expect(nrta_tensor_write(s.tensor, buf.data(), 16, kWrap, 0, tracker_, &seq), NRT_INVALID,
             "nrta_tensor_write (wrapping)");
      break;
    }
  }
  Check(t == nullptr, "a refused call handed out a tensor");
  nrt_tensor_free(&t);
  Count(true);
}

}  // namespace neuron::stress
