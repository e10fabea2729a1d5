// A whole HLO program: computations (callees before callers, as read), one
// of which is the entry, and the module-level configuration.
#ifndef NEURON_LIB_HLO_MODULE_H_
#define NEURON_LIB_HLO_MODULE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lib/hlo/computation.h"
#include "lib/hlo/input_output_alias.h"

namespace neuron::hlo {

struct ModuleConfig {
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  bool replica_count_given = false;
  bool num_partitions_given = false;
  bool is_scheduled = false;
  // Entry outputs living in entry parameters' buffers (donated inputs).
  std::vector<InputOutputAlias> input_output_alias;
  // Header attributes of the text form, verbatim (entry_computation_layout,
  // input_output_alias, frontend_attributes...), in order.
  std::vector<std::pair<std::string, std::string>> header_attributes;
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  ModuleConfig& config() { return config_; }
  const ModuleConfig& config() const { return config_; }

  Computation* AddComputation(std::unique_ptr<Computation> computation);
  // Keeps exactly `keep`, in that order, and destroys the other
  // computations (which nothing kept may call).
  void RetainComputations(const std::vector<Computation*>& keep);
  std::vector<Computation*> computations() const;
  size_t computation_count() const { return computations_.size(); }
  Computation* entry() const { return entry_; }
  void set_entry(Computation* entry) { entry_ = entry; }
  Computation* Find(std::string_view name) const;

  // Computations ordered so every callee comes before its callers, the
  // entry last (unreachable ones before it).
  std::vector<Computation*> PostOrder() const;

  // Total instructions over all computations.
  size_t instruction_count() const;

  // True when the module talks across devices (collectives, replica or
  // partition ids) or asks for several replicas/partitions.
  bool NeedsMultipleDevices() const;

 private:
  std::string name_;
  ModuleConfig config_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
};

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_MODULE_H_
