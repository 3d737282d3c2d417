// Small helpers for the unit tests: a scratch directory and byte-level file edits.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "file.h"

namespace h5j::test {

// Tags for TEST_CASE_TEMPLATE: the same test on each I/O engine.
struct UringEngine {
  static constexpr IoEngine value = IoEngine::kUring;
};
struct SyncEngine {
  static constexpr IoEngine value = IoEngine::kSync;
};

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "h5j-test-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

inline uint64_t file_size(const std::string& p) { return std::filesystem::file_size(p); }

inline std::vector<std::byte> read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  if (!c.empty()) std::memcpy(out.data(), c.data(), c.size());  // memcpy from null is undefined, even for 0 bytes
  return out;
}

inline void write_file(const std::string& p, const std::vector<std::byte>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

inline void copy_file(const std::string& from, const std::string& to, uint64_t length) {
  auto bytes = read_file(from);
  bytes.resize(std::min<uint64_t>(length, bytes.size()));
  write_file(to, bytes);
}

inline void fill_range(const std::string& p, uint64_t off, uint64_t n, std::byte b) {
  auto bytes = read_file(p);
  for (uint64_t i = off; i < off + n && i < bytes.size(); ++i) bytes[i] = b;
  write_file(p, bytes);
}

inline void scramble_range(const std::string& p, uint64_t off, uint64_t n, std::mt19937& rng) {
  auto bytes = read_file(p);
  for (uint64_t i = off; i < off + n && i < bytes.size(); ++i) bytes[i] = std::byte(rng());
  write_file(p, bytes);
}

inline void append_bytes(const std::string& p, uint64_t n, std::byte b) {
  auto bytes = read_file(p);
  bytes.resize(bytes.size() + n, b);
  write_file(p, bytes);
}

}  // namespace h5j::test
