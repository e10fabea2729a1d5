#include "lib/compiler/cache.h"

#include <openssl/sha.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/support/writer_tag.h"

namespace neuron::compiler {

namespace fs = std::filesystem;

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  std::string hex;
  for (unsigned char b : digest) hex += absl::StrFormat("%02x", b);
  return hex;
}

std::string CompileCache::Key(std::string_view version, const std::vector<std::string>& options,
                              std::string_view input) {
  // Length-prefixed parts so no two different tuples hash the same text.
  std::string material = absl::StrCat("neuron-compile-cache-v1\n", version.size(), ":", std::string(version), "\n");
  for (const std::string& o : options) absl::StrAppend(&material, o.size(), ":", o, "\n");
  absl::StrAppend(&material, input.size(), ":");
  std::string head = Sha256Hex(material);
  return Sha256Hex(absl::StrCat(head, Sha256Hex(input))).substr(0, 40);
}

std::string CompileCache::EntryDir(std::string_view key) const {
  return absl::StrCat(root_, "/neuronxcc-", version_, "/MODULE_", std::string(key));
}

namespace {

bool ReadWhole(const fs::path& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return static_cast<bool>(in) || in.eof();
}

absl::Status WriteWhole(const fs::path& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrFormat("cannot write %s", path.string()));
  return absl::OkStatus();
}

// Removes the staging (".tmp-<key>-<writer>-<n>") and eviction
// (".evicted-<writer>-<n>") directories of compiles killed before they
// could rename or remove them: their writer tag sits between the last two
// dashes (keys are hex, so they have none).
void SweepLeftovers(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(".tmp-") && !name.starts_with(".evicted-")) continue;
    const size_t last = name.rfind('-');
    const size_t before = last == std::string::npos ? last : name.rfind('-', last - 1);
    if (before == std::string::npos) continue;
    if (WriterGone(std::string_view(name).substr(before + 1, last - before - 1))) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
}

}  // namespace

CacheEntry CompileCache::Lookup(std::string_view key) const {
  CacheEntry e;
  e.dir = EntryDir(key);
  std::error_code ec;
  if (fs::exists(fs::path(e.dir) / "model.done", ec)) {
    if (ReadWhole(fs::path(e.dir) / "model.neff", &e.neff)) e.kind = CacheEntry::kSuccess;
  } else if (fs::exists(fs::path(e.dir) / "model.failed", ec)) {
    ReadWhole(fs::path(e.dir) / "model.failed", &e.error);
    while (!e.error.empty() && e.error.back() == '\n') e.error.pop_back();
    e.kind = CacheEntry::kFailure;
  }
  return e;
}

absl::Status CompileCache::Publish(std::string_view key,
                                   const std::vector<std::pair<std::string, std::string_view>>& files) const {
  fs::path final_dir = EntryDir(key);
  std::error_code ec;
  fs::create_directories(final_dir.parent_path(), ec);
  if (ec) return absl::InternalError(absl::StrFormat("cannot create cache directory %s: %s", final_dir.parent_path().string(), ec.message()));
  SweepLeftovers(final_dir.parent_path());
  std::random_device rd;
  fs::path tmp = final_dir.parent_path() /
                 absl::StrFormat(".tmp-%s-%s-%08x", std::string(key), WriterTag(), rd());
  fs::create_directory(tmp, ec);
  if (ec) return absl::InternalError(absl::StrFormat("cannot create %s: %s", tmp.string(), ec.message()));
  for (const auto& [name, data] : files) {
    if (absl::Status s = WriteWhole(tmp / name, data); !s.ok()) {
      fs::remove_all(tmp, ec);
      return s;
    }
  }
  // The marker goes last and the directory appears whole with rename: a
  // reader sees either no entry or a complete one.
  fs::rename(tmp, final_dir, ec);
  if (ec) {
    fs::remove_all(tmp, ec);  // another compile published first: keep its entry
  }
  return absl::OkStatus();
}

absl::Status CompileCache::StoreSuccess(std::string_view key, std::string_view neff, std::string_view log) const {
  return Publish(key, {{"model.neff", neff}, {"model.log", log}, {"model.done", ""}});
}

absl::Status CompileCache::StoreFailure(std::string_view key, std::string_view error, std::string_view log) const {
  std::string line = absl::StrCat(std::string(error), "\n");
  return Publish(key, {{"model.log", log}, {"model.failed", line}});
}

absl::Status CompileCache::Evict(std::string_view key) const {
  fs::path dir = EntryDir(key);
  std::random_device rd;
  fs::path trash = dir.parent_path() / absl::StrFormat(".evicted-%s-%08x", WriterTag(), rd());
  std::error_code ec;
  fs::rename(dir, trash, ec);
  if (!ec) fs::remove_all(trash, ec);
  return absl::OkStatus();
}

}  // namespace neuron::compiler
