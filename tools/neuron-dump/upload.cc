#include "tools/neuron-dump/upload.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/support/parse.h"
#include "tools/neuron-dump/sigv4.h"

namespace neuron::dump {
namespace {

absl::Status Walk(const std::string& dir, const std::string& rel,
                  std::vector<std::pair<std::string, std::string>>* out) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return absl::NotFoundError(absl::StrCat(dir, ": cannot open: ", std::strerror(errno)));
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    const std::string path = dir + "/" + n;
    struct stat st{};
    if (lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (absl::Status s = Walk(path, rel + n + "/", out); !s.ok()) return s;
    } else if (S_ISREG(st.st_mode)) {
      out->emplace_back(path, rel + n);
    }
  }
  return absl::OkStatus();
}

std::string BaseName(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class Progress {
 public:
  Progress(bool on, size_t files) : on_(on), files_(files) {}
  void Show(size_t index, const std::string& name, uint64_t done, uint64_t total) {
    if (!on_) return;
    const int pct = total ? static_cast<int>(100.0 * done / total) : 100;
    std::fprintf(stderr, "\rupload %zu/%zu %s %3d%% %s/%s   ", index + 1, files_,
                 name.substr(0, 40).c_str(), pct, FormatBytes(done).c_str(),
                 FormatBytes(total).c_str());
    std::fflush(stderr);
  }
  void Done() {
    if (on_) std::fputs("\n", stderr);
  }

 private:
  bool on_;
  size_t files_;
};

absl::StatusOr<std::string> ReadRange(const std::string& path, uint64_t offset, uint64_t size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  in.seekg(static_cast<std::streamoff>(offset));
  std::string data(size, '\0');
  in.read(data.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size)
    return absl::DataLossError(absl::StrCat(path, ": changed while being uploaded"));
  return data;
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> PlanUpload(
    const std::vector<std::string>& paths, const std::string& prefix_key) {
  std::string prefix = prefix_key;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::string& p : paths) {
    struct stat st{};
    if (stat(p.c_str(), &st) != 0)
      return absl::NotFoundError(absl::StrCat(p, ": ", std::strerror(errno)));
    if (S_ISDIR(st.st_mode)) {
      std::vector<std::pair<std::string, std::string>> found;
      std::string dir = p;
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      if (absl::Status s = Walk(dir, "", &found); !s.ok()) return s;
      for (auto& [local, rel] : found) files.emplace_back(local, prefix + rel);
    } else if (S_ISREG(st.st_mode)) {
      files.emplace_back(p, prefix + BaseName(p));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(p, ": not a regular file or directory"));
    }
  }
  return files;
}

absl::StatusOr<std::vector<UploadedObject>> UploadFiles(S3Client& client,
                                                        const std::vector<std::string>& paths,
                                                        const UploadOptions& options) {
  absl::StatusOr<S3Location> dest = ParseS3Uri(options.to);
  if (!dest.ok()) return dest.status();
  if (options.part_size < (5ull << 20))
    return absl::InvalidArgumentError("the part size must be at least 5 MiB (S3's minimum)");
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> plan =
      PlanUpload(paths, dest->key);
  if (!plan.ok()) return plan.status();
  Progress progress(options.progress, plan->size());
  std::vector<UploadedObject> done;
  for (size_t i = 0; i < plan->size(); ++i) {
    const auto& [local, key] = (*plan)[i];
    const S3Location at{dest->bucket, key};
    UploadedObject obj;
    obj.local = local;
    obj.uri = absl::StrCat("s3://", at.bucket, "/", at.key);
    struct stat st{};
    if (stat(local.c_str(), &st) != 0)
      return absl::NotFoundError(absl::StrCat(local, ": ", std::strerror(errno)));
    obj.bytes = static_cast<uint64_t>(st.st_size);
    const std::string shown = BaseName(local);
    std::string expected_etag, whole_md5;
    if (obj.bytes < options.multipart_threshold) {
      absl::StatusOr<std::string> data = ReadRange(local, 0, obj.bytes);
      if (!data.ok()) return data.status();
      expected_etag = whole_md5 = Md5Hex(*data);
      absl::StatusOr<std::string> etag = client.PutObject(
          at, *data, [&](uint64_t sent) { progress.Show(i, shown, sent, obj.bytes); });
      if (!etag.ok()) {
        progress.Done();
        return absl::Status(etag.status().code(),
                            absl::StrCat(local, ": ", etag.status().message()));
      }
      obj.etag = *etag;
    } else {
      absl::StatusOr<std::string> id = client.CreateMultipartUpload(at);
      if (!id.ok()) return absl::Status(id.status().code(), absl::StrCat(local, ": ", id.status().message()));
      std::vector<std::string> etags;
      std::string md5s;
      uint64_t offset = 0;
      absl::Status failed;
      while (offset < obj.bytes) {
        const uint64_t n = std::min(options.part_size, obj.bytes - offset);
        absl::StatusOr<std::string> data = ReadRange(local, offset, n);
        if (!data.ok()) {
          failed = data.status();
          break;
        }
        md5s += Md5Raw(*data);
        const uint64_t base = offset;
        absl::StatusOr<std::string> etag = client.UploadPart(
            at, *id, static_cast<int>(etags.size() + 1), *data,
            [&](uint64_t sent) { progress.Show(i, shown, base + sent, obj.bytes); });
        if (!etag.ok()) {
          failed = etag.status();
          break;
        }
        if (*etag != Md5Hex(*data)) {
          failed = absl::DataLossError(absl::StrFormat(
              "part %d: the server's ETag %s is not the MD5 of the bytes sent", etags.size() + 1,
              *etag));
          break;
        }
        etags.push_back(*etag);
        offset += n;
      }
      if (failed.ok()) {
        absl::StatusOr<std::string> etag = client.CompleteMultipartUpload(at, *id, etags);
        if (etag.ok()) obj.etag = *etag; else failed = etag.status();
      }
      if (!failed.ok()) {
        progress.Done();
        (void)client.AbortMultipartUpload(at, *id);
        return absl::Status(failed.code(), absl::StrCat(local, ": ", failed.message()));
      }
      obj.parts = static_cast<int>(etags.size());
      expected_etag = absl::StrCat(Md5Hex(md5s), "-", etags.size());
    }
    progress.Show(i, shown, obj.bytes, obj.bytes);
    // Confirm: the stored object has our size and our bytes' digest.
    absl::StatusOr<ObjectInfo> head = client.Head(at);
    if (!head.ok()) {
      progress.Done();
      return absl::Status(head.status().code(),
                          absl::StrCat(local, ": uploaded but not confirmed: ", head.status().message()));
    }
    bool etag_ok = head->etag == expected_etag;
    if (!etag_ok && obj.parts > 0) {
      // Some stores (s3rver) give a multipart object the MD5 of its bytes.
      etag_ok = head->etag == Md5HexOfFile(local);
    }
    if (head->size != obj.bytes || !etag_ok) {
      progress.Done();
      return absl::DataLossError(absl::StrFormat(
          "%s: the stored object %s has %d bytes and ETag %s; expected %d bytes and ETag %s",
          local, obj.uri, head->size, head->etag, obj.bytes, expected_etag));
    }
    if (options.delete_after) {
      if (unlink(local.c_str()) == 0) obj.deleted = true;
    }
    done.push_back(std::move(obj));
  }
  progress.Done();
  return done;
}

}  // namespace neuron::dump
