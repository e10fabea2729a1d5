// Who is writing a temporary file or directory, carried in its name so
// that what a killed writer left can be told from what a running one
// holds: "<host>.<pid>", the host as a hash of its name (on a shared file
// system a pid means nothing on another host). Used by the atomic files
// (lib/support/atomic_file.h) and the compile cache's staging directories.
#ifndef NEURON_LIB_SUPPORT_WRITER_TAG_H_
#define NEURON_LIB_SUPPORT_WRITER_TAG_H_

#include <string>
#include <string_view>

namespace neuron {

// This process's tag, e.g. "4049c22c.21289".
std::string WriterTag();

// Whether `tag` names a process of this host that no longer runs: its
// leftovers may go. False for another host's tag, a malformed one, and
// this process's own.
bool WriterGone(std::string_view tag);

}  // namespace neuron

#endif  // NEURON_LIB_SUPPORT_WRITER_TAG_H_
