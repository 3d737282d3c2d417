// The plugin's entry points, and the check that the HDF5 loading it is one
// it can run in.
//
// A driver is built against one HDF5 major.minor and one flavour: H5FD_class_t,
// the property lists and the private symbols the MPI code uses differ
// between them, so a mismatched plugin would crash or corrupt.  HDF5
// checks nothing when it loads a plugin, so the plugin does.  HDF5 calls
// H5PLget_plugin_type and H5PLget_plugin_info from its own library, found
// from the return address (this works when that library was loaded
// RTLD_LOCAL, as a wheel's is by h5py).  The first call binds the driver's
// HDF5 calls to that library (loaded_hdf5.cc); the second checks that
// every symbol the driver uses is in it, that it is the library bound, and
// that its version and flavour are the build's.  On a failure the plugin
// says why, naming both libraries, and hands HDF5 a driver that refuses
// every open with that reason.  It does not hand HDF5 no driver: HDF5
// 2.2's tools and h5py then crash (SIGSEGV) at their first open, as they do
// with any HDF5_DRIVER that HDF5 cannot load.  The refusing driver calls
// nothing in HDF5, which it may not be able to call; HDF5 checks the
// class's version before it uses the rest of it.
#include <dlfcn.h>
#include <H5PLextern.h>

#include <cstdio>
#include <string>

#include "driver.h"
#include "h5journal.h"
#include "loaded_hdf5.h"

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

// The version and flavour of the HDF5 library `hdf5`; false if it cannot be
// told.
bool read_version(const LoadedHdf5& hdf5, LoadingHdf5& out) {
  void* lib = dlopen(hdf5.path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (lib == nullptr) return false;
  // Its version string ("HDF5 library version: 2.2.0"), not
  // H5get_libversion: an API call clears HDF5's error stack, and HDF5 asks
  // every plugin for its info while it searches for a VOL connector after
  // a failed open, whose errors the user must still see.
  auto version = static_cast<const char*>(dlsym(lib, "H5_lib_vers_info_g"));
  bool known = version != nullptr &&
               std::sscanf(version, "HDF5 library version: %u.%u.%u", &out.major, &out.minor, &out.release) == 3;
  out.parallel = dlsym(lib, "H5Pset_fapl_mpio") != nullptr;
  out.path = hdf5.path;
  dlclose(lib);
  return known;
}

// This plugin's own file.
std::string plugin_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&plugin_path), &info) == 0 || info.dli_fname == nullptr)
    return "h5journal's plugin";
  return info.dli_fname;
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
  const LoadedHdf5* bound = bind_hdf5_at(caller);
  Dl_info info{};
  if (bound == nullptr || dladdr(caller, &info) == 0)
    return "h5journal: the plugin " + plugin_path() + " cannot tell which HDF5 library loaded it; "
           "it refuses to open any file.";
  if (info.dli_fbase != bound->base)
    return "h5journal: the plugin " + plugin_path() + " is loaded by HDF5 at " + info.dli_fname +
           ", but already calls the HDF5 at " + bound->path + "; it refuses to open any file.  A process "
           "can use h5journal with one copy of HDF5 only.";
  LoadingHdf5 loading;
  if (read_version(*bound, loading) &&
      (loading.major != H5_VERS_MAJOR || loading.minor != H5_VERS_MINOR || loading.parallel != kBuiltParallel))
    return "h5journal: the plugin " + plugin_path() + " was built for HDF5 " +
           describe(H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE, kBuiltParallel) + ", but HDF5 " +
           describe(loading.major, loading.minor, loading.release, loading.parallel) + " (" + loading.path +
           ") is loading it; it refuses to open any file.  Use a build of h5journal against this HDF5 "
           "(docs/building.md): a plugin works only with the HDF5 major.minor and flavour it was built for.";
  if (!bound->missing.empty())
    return "h5journal: the plugin " + plugin_path() + " needs HDF5 functions that the HDF5 loading it (" +
           bound->path + ") lacks: " + bound->missing + "; it refuses to open any file.  Use a build of "
           "h5journal against this HDF5's headers (docs/building.md).";
  return "";
}

}  // namespace h5j

extern "C" {

// The first call HDF5 makes: the driver binds to the HDF5 making it.
H5JOURNAL_API H5PL_type_t H5PLget_plugin_type(void) {
  h5j::bind_hdf5_at(__builtin_return_address(0));
  return H5PL_TYPE_VFD;
}

H5JOURNAL_API const void* H5PLget_plugin_info(void) {
  std::string mismatch = h5j::plugin_mismatch(__builtin_return_address(0));
  if (mismatch.empty()) return &h5j::journal_driver_class();
  return h5j::refusing_class(mismatch);
}

}  // extern "C"
