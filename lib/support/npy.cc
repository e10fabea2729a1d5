#include "lib/support/npy.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/support/atomic_file.h"

namespace neuron::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

}  // namespace

int DescrItemSize(std::string_view d) {
  static const struct { const char* descr; int size; } kTypes[] = {
      {"<f2", 2}, {"<f4", 4}, {"<f8", 8}, {"|i1", 1}, {"<i1", 1}, {"<i2", 2},
      {"<i4", 4}, {"<i8", 8}, {"|u1", 1}, {"<u1", 1}, {"<u2", 2}, {"<u4", 4},
      {"<u8", 8}, {"|b1", 1}, {"<c8", 8}, {"<c16", 16}, {"|V2", 2}, {"<V2", 2}, {"bfloat16", 2}, {"<bf16", 2}};
  for (const auto& t : kTypes) if (d == t.descr) return t.size;
  return 0;
}

int64_t Array::element_count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int Array::item_size() const { return DescrItemSize(descr); }

std::string Header(std::string_view descr, const std::vector<int64_t>& dims, size_t alignment) {
  std::string shape;
  if (dims.size() == 1) shape = absl::StrCat("(", dims[0], ",)");
  else shape = absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
  std::string header = absl::StrCat("{'descr': '", std::string(descr), "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad so the data starts on an `alignment` boundary; header ends with '\n'.
  auto round_up = [alignment](size_t n) { return (n + alignment - 1) / alignment * alignment; };
  size_t pre = 10;
  size_t total = pre + header.size() + 1;
  bool v2 = false;
  if (round_up(total) - pre > 65535) { v2 = true; pre = 12; total = pre + header.size() + 1; }
  size_t padded = round_up(total);
  header.append(padded - total, ' ');
  header.push_back('\n');
  std::string out(kMagic, 6);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back(0);
  uint32_t len = static_cast<uint32_t>(header.size());
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>((len >> 8) & 0xff));
  if (v2) {
    out.push_back(static_cast<char>((len >> 16) & 0xff));
    out.push_back(static_cast<char>((len >> 24) & 0xff));
  }
  out += header;
  return out;
}

std::string Serialize(const Array& a) {
  std::string out = Header(a.descr, a.shape);
  out.append(reinterpret_cast<const char*>(a.data.data()), a.data.size());
  return out;
}

absl::Status WriteFile(const std::string& path, const Array& a) {
  std::string bytes = Serialize(a);
  if (path == "-") {
    std::cout.write(bytes.data(), bytes.size());
    std::cout.flush();
    return std::cout ? absl::OkStatus() : absl::InternalError("<stdout>: write failed");
  }
  return WriteFileAtomically(path, bytes);
}

}  // namespace neuron::npy
