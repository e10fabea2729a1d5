// The TCP mesh transport (the fallback when libfabric has no provider).
#ifndef NEURON_LIB_COLLECTIVES_TCP_TRANSPORT_H_
#define NEURON_LIB_COLLECTIVES_TCP_TRANSPORT_H_

#include <memory>
#include <vector>

#include "lib/collectives/transport.h"

namespace neuron::collectives {

// Over connected, non-blocking sockets, one per rank (-1: self); owns them.
// spin: poll without sleeping.
std::unique_ptr<Transport> MakeTcpTransport(std::vector<int> fds,
                                            TransferHooks hooks, bool spin);

}  // namespace neuron::collectives

#endif  // NEURON_LIB_COLLECTIVES_TCP_TRANSPORT_H_
