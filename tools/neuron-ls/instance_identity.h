// Which EC2 instance this is: its type ("trn1.32xlarge") and id
// ("i-0123..."), from the firmware's DMI table, which Nitro instances fill
// in (product_name, board_asset_tag), or else from the instance metadata
// service: asked only on what looks like EC2, within a short deadline.
#ifndef NEURON_TOOLS_NEURON_LS_INSTANCE_IDENTITY_H_
#define NEURON_TOOLS_NEURON_LS_INSTANCE_IDENTITY_H_

#include <string>

#include "tools/neuron-ls/imds_client.h"

namespace neuron::ls {

struct IdentitySources {
  std::string dmi_dir = "/sys/devices/virtual/dmi/id";
  ImdsEndpoint imds;
  bool ask_imds = true;
};

struct InstanceIdentity {
  std::string type;  // "" when unknown
  std::string id;    // "" when unknown
  std::string note;  // why a value is unknown when that is worth a line; "" otherwise
};

InstanceIdentity ReadInstanceIdentity(const IdentitySources& sources);

// Whether text looks like an instance type ("trn1.32xlarge") or id
// ("i-0123456789abcdef0"): DMI fields hold other things off EC2 or on Xen.
bool LooksLikeInstanceType(const std::string& text);
bool LooksLikeInstanceId(const std::string& text);

}  // namespace neuron::ls

#endif  // NEURON_TOOLS_NEURON_LS_INSTANCE_IDENTITY_H_
