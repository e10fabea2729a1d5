// The one list of ../shared/hlo modules the corpus tests treat specially:
// modules known to be invalid HLO (the verifier rightly rejects them) and
// known failures found by a corpus test, each with its reason. A corpus test
// fails on a verifier rejection, crash or mismatch unless the module is
// listed here, and fails too when a listed module no longer behaves as
// listed, so the list cannot go stale.
#ifndef NEURON_TESTS_SUPPORT_CORPUS_KNOWN_H_
#define NEURON_TESTS_SUPPORT_CORPUS_KNOWN_H_

#include <string>
#include <vector>

namespace neuron::testing {

struct KnownModule {
  const char* file;    // file name in shared/hlo, e.g. "foo.hlo"
  const char* reason;  // why it is listed
};

// Modules whose HLO is invalid: the verifier rejects them.
const std::vector<KnownModule>& KnownInvalidModules();

// Modules the numpy oracle evaluates whose result ours does not match: a
// value mismatch, or our executor refusing the module (listed until fixed).
const std::vector<KnownModule>& KnownOracleMismatches();

// The reason a module (by file name or path) is listed in `list`, or ""
// when it is not.
std::string KnownReason(const std::vector<KnownModule>& list, const std::string& file_or_path);

}  // namespace neuron::testing

#endif  // NEURON_TESTS_SUPPORT_CORPUS_KNOWN_H_
