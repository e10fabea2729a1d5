// Version of the neuron-tools toolchain, shared by every tool and the NEFF
// writer (it is recorded in each NEFF's build-version field).
#ifndef NEURON_VERSION_H_
#define NEURON_VERSION_H_

#define NEURON_TOOLS_VERSION "0.1.0"
// Runtime API version, as the real libnrt reports it (NRT_MAJOR/MINOR).
#define NEURON_NRT_MAJOR_VERSION 2
#define NEURON_NRT_MINOR_VERSION 0

#endif  // NEURON_VERSION_H_
