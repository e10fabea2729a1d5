#include "tools/neuron-dump/aws_credentials.h"

#include <cstdlib>
#include <fstream>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace neuron::dump {
namespace {

using Ini = std::map<std::string, std::map<std::string, std::string>>;

// A small INI reader: [section], key = value, # and ; comments.
Ini ReadIni(const std::string& path) {
  Ini ini;
  std::ifstream in(path);
  std::string line, section;
  while (std::getline(in, line)) {
    absl::string_view l = absl::StripAsciiWhitespace(line);
    if (l.empty() || l[0] == '#' || l[0] == ';') continue;
    if (l.front() == '[' && l.back() == ']') {
      section = std::string(absl::StripAsciiWhitespace(l.substr(1, l.size() - 2)));
      continue;
    }
    const size_t eq = l.find('=');
    if (eq == std::string_view::npos) continue;
    ini[section][absl::AsciiStrToLower(absl::StripAsciiWhitespace(l.substr(0, eq)))] =
        std::string(absl::StripAsciiWhitespace(l.substr(eq + 1)));
  }
  return ini;
}

std::string Home(const GetEnv& env) {
  std::optional<std::string> h = env("HOME");
  return h.has_value() ? *h : "";
}

std::string CredentialsFile(const GetEnv& env) {
  std::optional<std::string> f = env("AWS_SHARED_CREDENTIALS_FILE");
  return f.has_value() && !f->empty() ? *f : Home(env) + "/.aws/credentials";
}

std::string ConfigFile(const GetEnv& env) {
  std::optional<std::string> f = env("AWS_CONFIG_FILE");
  return f.has_value() && !f->empty() ? *f : Home(env) + "/.aws/config";
}

std::string Profile(const GetEnv& env) {
  std::optional<std::string> p = env("AWS_PROFILE");
  return p.has_value() && !p->empty() ? *p : "default";
}

// The config file names sections "profile x", except "default".
const std::map<std::string, std::string>* ConfigSection(const Ini& ini, const std::string& profile) {
  auto it = ini.find(profile == "default" ? "default" : "profile " + profile);
  if (it == ini.end()) it = ini.find(profile);
  return it == ini.end() ? nullptr : &it->second;
}

}  // namespace

GetEnv ProcessGetEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

absl::StatusOr<AwsCredentials> LoadCredentials(const GetEnv& env) {
  std::optional<std::string> id = env("AWS_ACCESS_KEY_ID");
  std::optional<std::string> secret = env("AWS_SECRET_ACCESS_KEY");
  if (id.has_value() && !id->empty()) {
    if (!secret.has_value() || secret->empty())
      return absl::InvalidArgumentError(
          "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
    AwsCredentials c{*id, *secret, env("AWS_SESSION_TOKEN").value_or(""), "environment"};
    return c;
  }
  const std::string profile = Profile(env);
  const std::string cred_file = CredentialsFile(env);
  const Ini creds = ReadIni(cred_file);
  auto take = [&](const std::map<std::string, std::string>& s,
                  const std::string& where) -> std::optional<AwsCredentials> {
    auto i = s.find("aws_access_key_id");
    auto k = s.find("aws_secret_access_key");
    if (i == s.end() || k == s.end() || i->second.empty() || k->second.empty()) return std::nullopt;
    auto t = s.find("aws_session_token");
    return AwsCredentials{i->second, k->second, t == s.end() ? "" : t->second,
                          absl::StrCat("profile '", profile, "' in ", where)};
  };
  if (auto it = creds.find(profile); it != creds.end())
    if (auto c = take(it->second, cred_file)) return *c;
  const std::string cfg_file = ConfigFile(env);
  const Ini cfg = ReadIni(cfg_file);
  if (const auto* s = ConfigSection(cfg, profile))
    if (auto c = take(*s, cfg_file)) return *c;
  return absl::NotFoundError(absl::StrCat(
      "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give profile '",
      profile, "' keys in ", cred_file, " or ", cfg_file));
}

std::string ResolveRegion(const GetEnv& env, const std::string& flag) {
  if (!flag.empty()) return flag;
  for (const char* var : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
    std::optional<std::string> v = env(var);
    if (v.has_value() && !v->empty()) return *v;
  }
  const Ini cfg = ReadIni(ConfigFile(env));
  if (const auto* s = ConfigSection(cfg, Profile(env))) {
    auto it = s->find("region");
    if (it != s->end() && !it->second.empty()) return it->second;
  }
  return "us-east-1";
}

}  // namespace neuron::dump
