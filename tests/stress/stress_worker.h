// One thread of the libnrt stress client: a seeded random mix of valid and
// invalid calls on tensors and models it owns, each checked. Tensor reads,
// writes, copies, slices and memsets are checked against shadow copies;
// synchronous and asynchronous executions of an add model against sums
// computed here; invalid calls against the exact status they must return,
// after which the shadows must still match (a refused call changes
// nothing).
#ifndef NEURON_TESTS_STRESS_STRESS_WORKER_H_
#define NEURON_TESTS_STRESS_STRESS_WORKER_H_

#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "nrt/nrt.h"
#include "nrt/nrt_async.h"

namespace neuron::stress {

// The add model every worker runs: sum = x + y over kElements float32.
inline constexpr int kElements = 256;
std::string AddModelHlo();

// What workers share: failures (each one line) and counts.
struct Report {
  std::mutex mu;
  std::vector<std::string> failures;
  uint64_t calls = 0, invalid_calls = 0, executions = 0, loads = 0;
  void Fail(std::string line);
};

class Worker {
 public:
  // `model`: the add model loaded on core `vnc`, shared with other workers.
  Worker(uint64_t seed, int vnc, nrt_model_t* model, const std::string* neff, Report* report);
  ~Worker();  // frees everything it allocated
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  bool Setup();  // false (with a failure reported) when allocation fails
  void Step();   // one random operation

 private:
  struct Shadowed {
    nrt_tensor_t* tensor = nullptr;
    std::vector<uint8_t> shadow;
  };

  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  void Check(bool ok, const std::string& what);
  void Expect(NRT_STATUS got, NRT_STATUS want, const char* call);
  void Count(bool invalid);
  Shadowed& AnyTensor() { return tensors_[Below(tensors_.size())]; }

  void Write();
  void Read();
  void Copy();
  void Memset();
  void Slice();
  void ExecuteSync(nrt_model_t* model);
  void ExecuteAsync();
  void LoadRunUnload();
  void Invalid();
  bool WaitFor(nrta_seq_t seq, const char* what);
  void FillInputs(std::vector<float>* x, std::vector<float>* y);
  void CheckSum(const std::vector<float>& x, const std::vector<float>& y,
                const std::vector<float>& sum, const char* how);

  std::mt19937_64 rng_;
  const uint64_t seed_;
  const int vnc_;
  nrt_model_t* const model_;
  const std::string* const neff_;
  Report* const report_;
  uint64_t step_ = 0;

  std::vector<Shadowed> tensors_;  // device, device, host, virtual
  nrt_tensor_t *x_ = nullptr, *y_ = nullptr, *sum_ = nullptr;
  nrt_tensor_set_t *ins_ = nullptr, *outs_ = nullptr;
  nrta_error_tracker_t* tracker_ = nullptr;
};

}  // namespace neuron::stress

#endif  // NEURON_TESTS_STRESS_STRESS_WORKER_H_
