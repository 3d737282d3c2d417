// The plugin's entry points, and the check that the HDF5 loading it is the
// one it was built for.
//
// A driver is built against one HDF5 major.minor and one flavour: H5FD_class_t,
// the property lists and the private symbols the MPI code uses differ
// between them, so a mismatched plugin would crash or corrupt.  HDF5
// checks nothing when it loads a plugin, so the plugin does: HDF5 calls
// H5PLget_plugin_info from its own library, and that library (found from
// the return address, so this works when the application itself was
// loaded with RTLD_LOCAL, as h5py is) says its version and whether it is
// parallel.  On a mismatch the plugin says why, and hands HDF5 a driver
// that refuses every open with that reason.  It does not hand HDF5 no
// driver: HDF5 2.2's tools and h5py then crash (SIGSEGV) at their first
// open, as they do with any HDF5_DRIVER that HDF5 cannot load.  The
// refusing driver calls nothing in HDF5, whose library it may not match;
// HDF5 checks the class's version before it uses the rest of it.
#include <dlfcn.h>
#include <H5PLextern.h>

#include <cstdio>
#include <string>

#include "driver.h"
#include "h5journal.h"

namespace h5j {
namespace {

#ifdef H5_HAVE_PARALLEL
constexpr bool kBuiltParallel = true;
#else
constexpr bool kBuiltParallel = false;
#endif

struct LoadingHdf5 {
  std::string path;
  unsigned major = 0, minor = 0, release = 0;
  bool parallel = false;
};

// The HDF5 library that contains `code`; false if it cannot be told.
bool describe_hdf5_at(const void* code, LoadingHdf5& out) {
  Dl_info info{};
  if (dladdr(code, &info) == 0 || info.dli_fname == nullptr) return false;
  void* lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (lib == nullptr) return false;
  // Its version string ("HDF5 library version: 2.2.0"), not
  // H5get_libversion: an API call clears HDF5's error stack, and HDF5 asks
  // every plugin for its info while it searches for a VOL connector after
  // a failed open, whose errors the user must still see.
  auto version = static_cast<const char*>(dlsym(lib, "H5_lib_vers_info_g"));
  bool known = version != nullptr &&
               std::sscanf(version, "HDF5 library version: %u.%u.%u", &out.major, &out.minor, &out.release) == 3;
  out.parallel = dlsym(lib, "H5Pset_fapl_mpio") != nullptr;
  out.path = info.dli_fname;
  dlclose(lib);
  return known;
}

std::string describe(unsigned major, unsigned minor, unsigned release, bool parallel) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release) +
         (parallel ? " (parallel)" : " (serial)");
}

// Registration state of a plugin that refuses (written once, when HDF5
// loads it): why, and the class HDF5 gets.
std::string g_refusal;
H5FD_class_t g_refusing_class;

H5FD_t* refuse_open(const char* name, unsigned, hid_t, haddr_t) {
  std::fprintf(stderr, "%s (not opening %s)\n", g_refusal.c_str(), name != nullptr ? name : "a file");
  return nullptr;
}

herr_t refuse_delete(const char* name, hid_t) {
  std::fprintf(stderr, "%s (not deleting %s)\n", g_refusal.c_str(), name != nullptr ? name : "a file");
  return -1;
}

// HDF5 asks a plugin for its class more than once (at every search of its
// plugin path): the reason is printed the first time.
const H5FD_class_t* refusing_class(const std::string& why) {
  if (g_refusal.empty()) std::fprintf(stderr, "%s\n", why.c_str());
  g_refusal = why;
  g_refusing_class = journal_driver_class();
  g_refusing_class.open = refuse_open;
  g_refusing_class.del = refuse_delete;
  return &g_refusing_class;
}

}  // namespace

std::string plugin_mismatch(const void* caller) {
  LoadingHdf5 loading;
  if (!describe_hdf5_at(caller, loading)) return "";  // not called from an HDF5 we can read: trust it
  if (loading.major == H5_VERS_MAJOR && loading.minor == H5_VERS_MINOR && loading.parallel == kBuiltParallel)
    return "";
  return "h5journal: this plugin was built for HDF5 " +
         describe(H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE, kBuiltParallel) + ", but HDF5 " +
         describe(loading.major, loading.minor, loading.release, loading.parallel) + " (" + loading.path +
         ") is loading it; it refuses to open any file.  Use a build of h5journal against this HDF5 "
         "(docs/building.md): a plugin works only with the HDF5 major.minor and flavour it was built for.";
}

}  // namespace h5j

extern "C" {

H5JOURNAL_API H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_VFD; }

H5JOURNAL_API const void* H5PLget_plugin_info(void) {
  std::string mismatch = h5j::plugin_mismatch(__builtin_return_address(0));
  if (mismatch.empty()) return &h5j::journal_driver_class();
  return h5j::refusing_class(mismatch);
}

}  // extern "C"
