// Internal: the executable's plan. Each computation becomes a CompPlan: a
// list of steps bound at build time to the buffers they read and write.
#ifndef NEURON_LIB_KERNELS_PLAN_H_
#define NEURON_LIB_KERNELS_PLAN_H_

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <memory>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/hlo/module.h"
#include "lib/kernels/buffer.h"
#include "lib/kernels/executable.h"
#include "lib/kernels/expr_program.h"
#include "lib/kernels/lazy_scratch.h"

namespace neuron::kernels {

struct RunCtx {
  const ExecOptions* opts = nullptr;
  RunStats* stats = nullptr;
  ExprRunContext expr;
  bool check_time = false;  // cancel or deadline given
  // Where the steps' kernels take their scratch (one scope per step).
  ScratchArena* scratch = nullptr;
  // Cancellation / deadline check; called between steps and per loop trip.
  absl::Status Check() const;
  // While loops running around the current step (RunStats::loop_trips
  // counts the outermost ones).
  int loop_depth = 0;
};

struct Step {
  std::string name;  // the instruction's name, for NaN/Inf reports
  std::function<absl::Status(RunCtx&)> fn;
  std::vector<Buf*> outs;  // checked for NaN/Inf in debug mode
};

struct CompPlan {
  const hlo::Computation* comp = nullptr;
  std::vector<std::vector<Buf*>> params;  // leaves per parameter number
  std::vector<Step> steps;
  std::vector<Buf*> root;
  // A loop body's results written straight into the loop state (the
  // while step points them there before each trip).
  std::vector<bool> root_in_place;
};

absl::Status RunPlan(const CompPlan& plan, RunCtx& ctx);

// True when any element of a float buffer is NaN or Inf.
bool HasNonFinite(const Buf& b);

// Builds plans for every computation reachable from the entry.
class Planner {
 public:
  Planner(BufferAllocator* allocator, std::deque<Buf>* bufs,
          std::vector<std::pair<void*, size_t>>* allocations);

  // share_with_caller: the computation runs as one step of the one being
  // planned (a call), so its buffers join the caller's arena with their
  // lifetimes in the caller's timeline instead of taking an arena of their
  // own: the callees of a model's fused computations then share memory.
  // loop_body: the computation is a while loop's body; a result whose
  // state element the body no longer reads by the time it is made is
  // written in place (see CompPlan::root_in_place).
  absl::StatusOr<CompPlan*> Plan(const hlo::Computation& comp, bool share_with_caller = false,
                                 bool loop_body = false);
  void set_external_constants(ExternalConstantFn fn) { external_constant_ = std::move(fn); }
  int64_t constant_bytes() const { return constant_bytes_; }
  int64_t owned_bytes() const { return owned_bytes_; }
  // The most kernel scratch one step takes at once (the workspace bound).
  uint64_t workspace_bytes() const { return workspace_; }
  // Zeroes (commits) the buffers planned, so a run does not fault their
  // pages in; fails naming both figures if they did not fit the host's
  // free memory.
  absl::Status CommitBuffers();

  // Fresh leaves for a shape (tokens have none): owned storage or bound.
  // Shareable owned leaves get storage when the computation is planned,
  // from an arena where buffers whose lifetimes do not overlap share bytes.
  std::vector<Buf*> NewLeaves(const hlo::Shape& shape, Buf::Role role,
                              bool shareable = false);

 private:
  absl::Status PlanInstruction(CompPlan& plan, const hlo::Instruction& instr);
  absl::Status PlanKernels(CompPlan& plan, const hlo::Instruction& instr);
  absl::Status Unsupported(const hlo::Instruction& instr, absl::string_view what);
  Buf* NewBuf(hlo::ElementType type, std::vector<int64_t> dims, Buf::Role role,
              bool shareable = false);
  // The lifetimes of the shareable buffers of the computation just planned
  // (pending_), from the reads of its instructions (their clocks in
  // clock_of); its root lives to `root_end`.
  // When each buffer (by storage root) is last read by an instruction of
  // `order`, at its clock; operand 0 of the `in_place` instructions (updates
  // written over it) does not count.
  std::map<const Buf*, int64_t> LastReads(const std::vector<const hlo::Instruction*>& order,
                                          const std::vector<int64_t>& clock_of,
                                          const std::set<const hlo::Instruction*>& in_place = {});
  void ExtendLifetimes(const hlo::Computation& comp,
                       const std::vector<const hlo::Instruction*>& order,
                       const std::vector<int64_t>& clock_of, int64_t root_end);
  // Gives pending_ their storage, but `skip` (the entry's direct roots):
  // first-fit by size over [definition, last use] intervals.
  void AssignSharedStorage(const std::vector<Buf*>& skip = {});
  // Which of a loop body's results can be written over the state element
  // of the same position: the body's last read of that element comes
  // before the result is made.
  std::vector<bool> InPlaceLoopResults(const CompPlan& body,
                                       const std::vector<const hlo::Instruction*>& order,
                                       const std::vector<int64_t>& clock_of);
  // A loop's state, one buffer per leaf: an element the body passes through
  // unchanged is its init value itself; the others are fresh buffers, which
  // AssignSharedStorage places in their init value's storage where nothing
  // reads that value once the loop has started.
  std::vector<Buf*> LoopState(const CompPlan& body, const std::vector<const Buf*>& init);
  // The body's result i is its parameter's element i (unchanged).
  bool LoopPassesThrough(const CompPlan& body, size_t i) const;
  // The body's result i is another position's state element (a swap).
  bool LoopResultIsOtherState(const CompPlan& body, size_t i) const;
  Buf* StorageRoot(Buf* b) const;
  const std::vector<Buf*>& Leaves(const hlo::Instruction* instr) { return values_[instr]; }
  std::vector<const Buf*> OperandLeaves(const hlo::Instruction& instr);
  absl::Status AddCall(CompPlan& plan, const hlo::Instruction& instr,
                       const hlo::Computation& callee);
  // Allocates planned storage, or returns null once the model's buffers
  // would not fit the host's free memory (they are never touched then:
  // planning stops with BudgetError instead of the OOM killer ending us).
  void* Reserve(size_t bytes);
  absl::Status BudgetError() const;

  BufferAllocator* allocator_;
  ExternalConstantFn external_constant_;
  std::deque<Buf>* bufs_;
  std::vector<std::pair<void*, size_t>>* allocations_;
  std::vector<std::unique_ptr<CompPlan>> plans_;
  std::map<const hlo::Instruction*, std::vector<Buf*>> values_;
  struct Pending {
    Buf* buf;
    int64_t def;
    int64_t end;  // last use known so far
  };
  std::vector<Pending> pending_;      // shareable buffers of the current plan
  struct LoopStateReuse {
    Buf* state;     // a loop's state element
    Buf* init;      // the owned buffer holding its init value
    int64_t clock;  // when the loop is done reading its init values
  };
  std::vector<LoopStateReuse> loop_state_reuse_;
  // Instructions planned so far, nested computations included: planning
  // follows run order, so this is the timeline buffer lifetimes use.
  int64_t position_ = 0;
  std::map<const Buf*, Buf*> alias_of_;  // reshape-like aliases -> source
  int64_t constant_bytes_ = 0, owned_bytes_ = 0;
  // Buffers to zero in CommitBuffers (constants are written at once), and
  // the bytes of every buffer planned.
  std::vector<std::pair<void*, size_t>> to_commit_;
  uint64_t planned_bytes_ = 0;
  uint64_t workspace_ = 0;
  std::vector<uint64_t> nested_scratch_;  // per instruction being planned
  uint64_t available_ = 0;        // host memory free when planning began
  uint64_t budget_ = UINT64_MAX;  // what the buffers may take of it
  bool over_budget_ = false;
};

// Which leaves of the entry's root are written straight into the caller's
// output tensors (Executable::Run points them there): owned and not
// repeated. They need no storage of their own.
std::vector<bool> DirectRoots(const std::vector<Buf*>& root);

// broadcast of a one-element array (elementwise users read it as a splat).
bool IsScalarBroadcast(const hlo::Instruction* instr);

// Number of array leaves in a shape (tokens count as none).
int64_t LeafCount(const hlo::Shape& shape);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_PLAN_H_
