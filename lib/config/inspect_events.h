// The event types the profiler's system trace knows, each in one category
// (hardware or software), and the resolution of
// NEURON_RT_INSPECT_EVENT_FILTER_TYPE: categories, names and ^name to
// subtract.
#ifndef NEURON_LIB_CONFIG_INSPECT_EVENTS_H_
#define NEURON_LIB_CONFIG_INSPECT_EVENTS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::config {

struct InspectEvent {
  const char* name;
  const char* category;  // "hardware" or "software"
};

// Every event type, hardware first, in a fixed order.
const std::vector<InspectEvent>& AllInspectEvents();
std::vector<std::string> AllInspectEventNames();

// "hardware, software, compute, dma, ...": every word the filter accepts.
std::string ValidEventFilterWords();

// Resolves a filter such as "hardware,^cc_running" into event names in the
// order of AllInspectEvents(). A filter made only of subtractions starts
// from every event. An unknown word is an error whose message lists every
// valid word.
absl::StatusOr<std::vector<std::string>> ResolveEventFilter(std::string_view text);

}  // namespace neuron::config

#endif  // NEURON_LIB_CONFIG_INSPECT_EVENTS_H_
