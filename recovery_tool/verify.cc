#include "verify.h"

#include <hdf5.h>
#include <openssl/evp.h>

#include <cstdio>
#include <mutex>
#include <vector>

#include "hdf5_walk.h"

namespace h5j {

std::string sha256_of(const std::string& file) {
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (f == nullptr) return "";
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  std::vector<unsigned char> buf(1 << 20);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) EVP_DigestUpdate(ctx, buf.data(), n);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  std::fclose(f);
  std::string hex;
  for (unsigned i = 0; i < len; ++i) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", md[i]);
    hex += b;
  }
  return hex;
}

bool verify_readable(const std::string& file) {
  static std::mutex hdf5_calls;
  std::lock_guard<std::mutex> lock(hdf5_calls);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_sec2(fapl);
  bool ok = false;
  H5E_BEGIN_TRY {
    hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl);
    if (f >= 0) {
      ok = describe_file(f).has_value();
      ok = H5Fclose(f) >= 0 && ok;
    }
  }
  H5E_END_TRY
  H5Pclose(fapl);
  return ok;
}

}  // namespace h5j
