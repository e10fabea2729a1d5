#include "tools/neuron-ls/instance_identity.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "lib/device/tree_files.h"

namespace neuron::ls {
namespace {

std::string DmiField(const IdentitySources& sources, const char* name) {
  absl::StatusOr<std::string> v = device::ReadTrimmed(sources.dmi_dir + "/" + name);
  return v.ok() ? *v : std::string();
}

// Nitro names the vendor "Amazon EC2"; Xen instances carry "amazon" in the
// BIOS version. Anywhere else the metadata address is not asked at all.
bool LooksLikeEc2(const IdentitySources& sources) {
  for (const char* field : {"sys_vendor", "bios_vendor", "board_vendor", "bios_version"}) {
    if (absl::StrContains(absl::AsciiStrToLower(DmiField(sources, field)), "amazon")) return true;
  }
  return false;
}

}  // namespace

bool LooksLikeInstanceType(const std::string& text) {
  const size_t dot = text.find('.');
  if (dot == 0 || dot == std::string::npos || dot + 1 == text.size() || text.size() > 40) {
    return false;
  }
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (i != dot && !std::islower(c) && !std::isdigit(c) && c != '-') return false;
  }
  return std::islower(static_cast<unsigned char>(text[0]));
}

bool LooksLikeInstanceId(const std::string& text) {
  if (text.size() < 10 || text.size() > 40 || text.rfind("i-", 0) != 0) return false;
  for (size_t i = 2; i < text.size(); ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

InstanceIdentity ReadInstanceIdentity(const IdentitySources& sources) {
  InstanceIdentity out;
  if (std::string type = DmiField(sources, "product_name"); LooksLikeInstanceType(type)) {
    out.type = type;
  }
  if (std::string id = DmiField(sources, "board_asset_tag"); LooksLikeInstanceId(id)) {
    out.id = id;
  }
  if ((!out.type.empty() && !out.id.empty()) || !sources.ask_imds || !LooksLikeEc2(sources)) {
    return out;
  }
  absl::StatusOr<std::map<std::string, std::string>> answer =
      QueryImds(sources.imds, {"instance-type", "instance-id"});
  if (!answer.ok()) {
    out.note = std::string(answer.status().message());
    return out;
  }
  const std::string type = std::string(absl::StripAsciiWhitespace((*answer)["instance-type"]));
  const std::string id = std::string(absl::StripAsciiWhitespace((*answer)["instance-id"]));
  if (out.type.empty() && LooksLikeInstanceType(type)) out.type = type;
  if (out.id.empty() && LooksLikeInstanceId(id)) out.id = id;
  return out;
}

}  // namespace neuron::ls
