#include "hdf5_walk.h"

#include <cstring>
#include <map>

#include "fnv1a.h"

namespace h5j {
namespace {

// FNV-1a, enough to tell contents apart in a test.
struct Digest {
  uint64_t h = kFnv1aStart;
  void add(const void* p, size_t n) { h = fnv1a64(p, n, h); }
  void add(const std::string& s) { add(s.data(), s.size() + 1); }
};

// Reads a dataset (is_attr=false) or attribute into the digest; false on error.
bool digest_values(hid_t obj, bool is_attr, Digest& d) {
  hid_t ftype = is_attr ? H5Aget_type(obj) : H5Dget_type(obj);
  hid_t space = is_attr ? H5Aget_space(obj) : H5Dget_space(obj);
  if (ftype < 0 || space < 0) return false;
  hssize_t n = H5Sget_simple_extent_npoints(space);
  int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(size_t(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  d.add(dims.data(), dims.size() * sizeof(hsize_t));
  H5T_class_t cls = H5Tget_class(ftype);
  d.add(&cls, sizeof cls);
  hid_t mtype;
  bool vlstr = H5Tis_variable_str(ftype) > 0;
  if (vlstr) {
    mtype = H5Tcopy(H5T_C_S1);
    H5Tset_size(mtype, H5T_VARIABLE);
  } else if (cls == H5T_VLEN) {
    hid_t base = H5Tget_super(ftype);
    hid_t nbase = H5Tget_native_type(base, H5T_DIR_DEFAULT);
    mtype = H5Tvlen_create(nbase);
    H5Tclose(nbase);
    H5Tclose(base);
  } else {
    mtype = H5Tget_native_type(ftype, H5T_DIR_DEFAULT);
  }
  size_t esize = H5Tget_size(mtype);
  std::vector<unsigned char> buf(size_t(n) * esize + 1);
  herr_t rc = is_attr ? H5Aread(obj, mtype, buf.data()) : H5Dread(obj, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
  bool ok = rc >= 0;
  if (ok && vlstr) {
    for (hssize_t i = 0; i < n; ++i) {
      char* s = reinterpret_cast<char**>(buf.data())[i];
      d.add(s ? std::string(s) : std::string("<null>"));
    }
  } else if (ok && cls == H5T_VLEN) {
    hid_t base = H5Tget_super(mtype);
    size_t bsize = H5Tget_size(base);
    for (hssize_t i = 0; i < n; ++i) {
      const hvl_t& v = reinterpret_cast<hvl_t*>(buf.data())[i];
      d.add(&v.len, sizeof v.len);
      d.add(v.p, v.len * bsize);
    }
    H5Tclose(base);
  } else if (ok) {
    d.add(buf.data(), size_t(n) * esize);
  }
  if (ok && (vlstr || cls == H5T_VLEN)) H5Treclaim(mtype, space, H5P_DEFAULT, buf.data());
  H5Tclose(mtype);
  H5Tclose(ftype);
  H5Sclose(space);
  return ok;
}

struct Walk {
  std::map<std::string, std::string> entries;  // path -> description
  bool ok = true;
};

herr_t describe_attribute(hid_t loc, const char* name, const H5A_info_t*, void* data) {
  auto* out = static_cast<std::pair<Walk*, std::string>*>(data);
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  Digest d;
  if (a < 0 || !digest_values(a, true, d)) out->first->ok = false;
  if (a >= 0) H5Aclose(a);
  out->first->entries[out->second + "@" + name] = "attr " + std::to_string(d.h);
  return 0;
}

herr_t describe_object(hid_t root, const char* name, const H5O_info2_t* info, void* data) {
  auto* walk = static_cast<Walk*>(data);
  std::string path = name;
  hid_t obj = H5Oopen(root, name, H5P_DEFAULT);
  if (obj < 0) {
    walk->ok = false;
    return 0;
  }
  std::string what = info->type == H5O_TYPE_GROUP ? "group" : info->type == H5O_TYPE_DATASET ? "dataset" : "other";
  if (info->type == H5O_TYPE_DATASET) {
    Digest d;
    if (!digest_values(obj, false, d)) walk->ok = false;
    what += " " + std::to_string(d.h);
  }
  walk->entries[path] = what;
  std::pair<Walk*, std::string> ctx{walk, path};
  if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, nullptr, describe_attribute, &ctx) < 0) walk->ok = false;
  H5Oclose(obj);
  return 0;
}

}  // namespace

std::optional<std::string> describe_file(hid_t file) {
  Walk walk;
  herr_t rc;
  H5E_BEGIN_TRY { rc = H5Ovisit3(file, H5_INDEX_NAME, H5_ITER_INC, describe_object, &walk, H5O_INFO_BASIC); }
  H5E_END_TRY
  if (rc < 0 || !walk.ok) return std::nullopt;
  std::string out;
  for (const auto& [path, what] : walk.entries) out += path + " " + what + "\n";
  return out;
}

std::optional<std::string> describe_image(const std::vector<std::byte>& image) {
  if (image.empty()) return std::nullopt;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_core(fapl, 1 << 16, false);
  H5Pset_file_image(fapl, const_cast<std::byte*>(image.data()), image.size());
  std::optional<std::string> out;
  H5E_BEGIN_TRY {
    hid_t f = H5Fopen("recovered-image", H5F_ACC_RDONLY, fapl);
    if (f >= 0) {
      out = describe_file(f);
      if (H5Fclose(f) < 0) out.reset();
    }
  }
  H5E_END_TRY
  H5Pclose(fapl);
  return out;
}

}  // namespace h5j
