#include "lib/config/inspect_events.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace neuron::config {
namespace {

bool IsCategory(std::string_view word) {
  return word == "hardware" || word == "software";
}

bool IsEventName(std::string_view word) {
  for (const InspectEvent& event : AllInspectEvents()) {
    if (word == event.name) return true;
  }
  return false;
}

}  // namespace

const std::vector<InspectEvent>& AllInspectEvents() {
  static const std::vector<InspectEvent> kEvents = {
      // Produced by the device: engines, DMA rings, collectives progress.
      {"nc_exec", "hardware"},
      {"compute", "hardware"},
      {"dma", "hardware"},
      {"h2d_dma", "hardware"},
      {"dge", "hardware"},
      {"cc_running", "hardware"},
      {"cc_pending", "hardware"},
      {"throttle", "hardware"},
      // Produced by the runtime on the host.
      {"api", "software"},
      {"load", "software"},
      {"unload", "software"},
      {"exec", "software"},
      {"kernel", "software"},
      {"memory", "software"},
      {"tensor", "software"},
      {"cc_setup", "software"},
  };
  return kEvents;
}

std::vector<std::string> AllInspectEventNames() {
  std::vector<std::string> names;
  for (const InspectEvent& event : AllInspectEvents()) names.push_back(event.name);
  return names;
}

std::string ValidEventFilterWords() {
  std::string words = "hardware, software";
  for (const InspectEvent& event : AllInspectEvents()) {
    words += ", ";
    words += event.name;
  }
  return words;
}

absl::StatusOr<std::vector<std::string>> ResolveEventFilter(std::string_view text) {
  // Split on commas; empty items (",," or a trailing comma) are errors too.
  std::vector<std::string_view> words;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    words.push_back(text.substr(start, comma == std::string_view::npos
                                           ? std::string_view::npos
                                           : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::set<std::string> selected;
  bool only_subtractions = true;
  for (std::string_view word : words) {
    if (!word.empty() && word.front() != '^') only_subtractions = false;
  }
  if (only_subtractions) {
    for (const InspectEvent& event : AllInspectEvents()) selected.insert(event.name);
  }
  for (std::string_view word : words) {
    bool subtract = !word.empty() && word.front() == '^';
    std::string_view name = subtract ? word.substr(1) : word;
    if (!IsCategory(name) && !IsEventName(name)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "'%s' is not an event type (valid: %s, each optionally prefixed "
          "with ^ to remove it)",
          word, ValidEventFilterWords()));
    }
    for (const InspectEvent& event : AllInspectEvents()) {
      if (name != event.name && name != event.category) continue;
      if (subtract) {
        selected.erase(event.name);
      } else {
        selected.insert(event.name);
      }
    }
  }
  std::vector<std::string> resolved;
  for (const InspectEvent& event : AllInspectEvents()) {
    if (selected.count(event.name)) resolved.push_back(event.name);
  }
  return resolved;
}

}  // namespace neuron::config
