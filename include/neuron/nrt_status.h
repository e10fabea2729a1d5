// Status helpers the tools share, over the public codes of nrt/nrt_status.h.
// Not part of libnrt's ABI: the library does not export them.
#ifndef NEURON_NRT_STATUS_H_
#define NEURON_NRT_STATUS_H_

#include "nrt/nrt_status.h"

#ifdef __cplusplus
extern "C" {
#endif

// "NRT_TIMEOUT" for NRT_TIMEOUT; "NRT_UNKNOWN" for a value not listed above.
const char* nrt_get_status_name(NRT_STATUS status);
// Parses "NRT_TIMEOUT", "TIMEOUT" or "5"; returns 0 on success, -1 otherwise.
int nrt_parse_status(const char* text, NRT_STATUS* out);

#ifdef __cplusplus
}
#endif

#endif  // NEURON_NRT_STATUS_H_
