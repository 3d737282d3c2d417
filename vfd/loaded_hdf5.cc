// The HDF5 API the driver calls, taken from the HDF5 library it runs in.
//
// Why: a plugin that names libhdf5 in a NEEDED entry gets the copy with that
// name, which need not be the copy that loaded it.  A pip wheel of h5py
// bundles HDF5 as h5py.libs/libhdf5-<hash>.so and loads it RTLD_LOCAL; a
// plugin naming libhdf5_serial.so.320 then maps Debian's copy beside it
// (or finds none and the process dies), hands one copy's identifiers to
// the other ("not a property list"), and loses its configuration.  So the
// driver is linked with no libhdf5 at all (hdf5plugin's filters do the same).
//
// How: every HDF5 function the driver calls is defined below under HDF5's
// own name and signature, and forwards to the function of that name in the
// bound library.  vfd/exports.map keeps these definitions local, so they
// serve the driver's own calls and never interpose on an application's.
// Every HDF5 variable the driver reads (error classes, property-list
// classes) is defined here too, and copied from the bound library in
// H5open: HDF5's headers read them only through H5OPEN, which calls H5open
// first, so the copy is fresh at every read.  A call the list lacks is a
// link error (-Wl,--no-undefined), so the list is complete by construction.
//
// Which library: the one whose code first called the plugin's entry points
// (plugin_check.cc: H5PLget_plugin_type, from HDF5's plugin loader); else,
// in an application linked with the driver, the HDF5 that defines H5open in
// the process's global scope, bound at the driver's first HDF5 call.
//
// The binding is the only state here, written once (std::call_once) before
// any forwarded call runs; HDF5's driver registration depends on it.
#include "loaded_hdf5.h"

#include <dlfcn.h>
#include <link.h>
#include <H5FDdevelop.h>
#include <hdf5.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "hdf5_private.h"

// X(return type, name, (parameters), (arguments)): every HDF5 function the
// driver calls, with the signature HDF5's headers give it (the compiler
// checks each definition below against its declaration there).  H5open and
// H5Epush2, which do more than forward, are defined on their own.
#define H5J_SERIAL_FUNCTIONS(X)                                                                                    \
  X(herr_t, H5check_version, (unsigned a, unsigned b, unsigned c), (a, b, c))                                      \
  X(herr_t, H5Eauto_is_v2, (hid_t s, unsigned* v2), (s, v2))                                                       \
  X(herr_t, H5Eclear2, (hid_t s), (s))                                                                             \
  X(herr_t, H5Eget_auto1, (H5E_auto1_t * f, void** d), (f, d))                                                     \
  X(herr_t, H5Eset_auto1, (H5E_auto1_t f, void* d), (f, d))                                                        \
  X(herr_t, H5Eget_auto2, (hid_t s, H5E_auto2_t* f, void** d), (s, f, d))                                          \
  X(herr_t, H5Eset_auto2, (hid_t s, H5E_auto2_t f, void* d), (s, f, d))                                            \
  X(hid_t, H5FDregister, (const H5FD_class_t* c), (c))                                                             \
  X(herr_t, H5Fget_vfd_handle, (hid_t f, hid_t p, void** h), (f, p, h))                                            \
  X(H5I_type_t, H5Iget_type, (hid_t id), (id))                                                                     \
  X(hid_t, H5Pcreate, (hid_t c), (c))                                                                              \
  X(herr_t, H5Pclose, (hid_t p), (p))                                                                              \
  X(htri_t, H5Pexist, (hid_t p, const char* n), (p, n))                                                            \
  X(herr_t, H5Pget, (hid_t p, const char* n, void* v), (p, n, v))                                                  \
  X(herr_t, H5Pinsert2,                                                                                            \
    (hid_t p, const char* n, size_t s, void* v, H5P_prp_set_func_t set, H5P_prp_get_func_t get,                    \
     H5P_prp_delete_func_t del, H5P_prp_copy_func_t copy, H5P_prp_compare_func_t cmp, H5P_prp_close_func_t close), \
    (p, n, s, v, set, get, del, copy, cmp, close))                                                                 \
  X(hid_t, H5Pget_driver, (hid_t p), (p))                                                                          \
  X(const void*, H5Pget_driver_info, (hid_t p), (p))                                                               \
  X(ssize_t, H5Pget_driver_config_str, (hid_t p, char* s, size_t n), (p, s, n))                                    \
  X(herr_t, H5Pset_driver, (hid_t p, hid_t d, const void* i), (p, d, i))                                           \
  X(herr_t, H5Pget_file_locking, (hid_t p, hbool_t * use, hbool_t * ignore), (p, use, ignore))                     \
  X(H5S_sel_type, H5Sget_select_type, (hid_t s), (s))                                                              \
  X(hssize_t, H5Sget_select_npoints, (hid_t s), (s))                                                               \
  X(hid_t, H5Ssel_iter_create, (hid_t s, size_t e, unsigned f), (s, e, f))                                         \
  X(herr_t, H5Ssel_iter_get_seq_list,                                                                              \
    (hid_t i, size_t m, size_t b, size_t * n, size_t * nb, hsize_t * off, size_t * len),                           \
    (i, m, b, n, nb, off, len))                                                                                    \
  X(herr_t, H5Ssel_iter_close, (hid_t i), (i))                                                                     \
  X(uint32_t, H5_checksum_metadata, (const void* d, size_t n, uint32_t init), (d, n, init))

#ifdef H5_HAVE_PARALLEL
#define H5J_PARALLEL_FUNCTIONS(X)                                                                   \
  X(herr_t, H5Pget_mpi_params, (hid_t p, MPI_Comm * c, MPI_Info * i), (p, c, i))                    \
  X(herr_t, H5CX_get_io_xfer_mode, (H5FD_mpio_xfer_t * m), (m))                                     \
  X(herr_t, H5CX_get_mpi_coll_datatypes, (MPI_Datatype * b, MPI_Datatype * f), (b, f))              \
  X(herr_t, H5CX_get_mpio_coll_opt, (H5FD_mpio_collective_opt_t * o), (o))                          \
  X(void*, H5I_object, (hid_t id), (id))                                                            \
  X(herr_t, H5P_get, (H5P_genplist_t * p, const char* n, void* v), (p, n, v))                       \
  X(herr_t, H5P_set, (H5P_genplist_t * p, const char* n, const void* v), (p, n, v))
#else
#define H5J_PARALLEL_FUNCTIONS(X)
#endif

#define H5J_FUNCTIONS(X) \
  X(herr_t, H5open, , ) X(herr_t, H5Epush2, , ) H5J_SERIAL_FUNCTIONS(X) H5J_PARALLEL_FUNCTIONS(X)

// Every HDF5 variable the driver reads: identifiers HDF5 sets when it
// initialises.
#define H5J_VARIABLES(X)                                                                                          \
  X(H5E_ERR_CLS_g) X(H5E_VFL_g) X(H5E_SYSTEM_g) X(H5E_BADRANGE_g) X(H5E_BADTYPE_g) X(H5E_BADVALUE_g)              \
  X(H5E_CANTALLOC_g) X(H5E_CANTCLOSEFILE_g) X(H5E_CANTDELETEFILE_g) X(H5E_CANTFLUSH_g) X(H5E_CANTLOCKFILE_g)       \
  X(H5E_CANTOPENFILE_g) X(H5E_CANTREGISTER_g) X(H5E_CANTUPDATE_g) X(H5E_FCNTL_g) X(H5E_READERROR_g)               \
  X(H5E_WRITEERROR_g) X(H5P_CLS_FILE_ACCESS_ID_g)

namespace h5j {
namespace {

struct Functions {
#define H5J_SLOT(ret, name, params, args) decltype(&::name) name = nullptr;
  H5J_FUNCTIONS(H5J_SLOT)
#undef H5J_SLOT
};

struct Variables {  // where the bound library keeps them
#define H5J_SLOT(name) const hid_t* name = nullptr;
  H5J_VARIABLES(H5J_SLOT)
#undef H5J_SLOT
};

struct Binding {
  LoadedHdf5 library;
  Functions functions;
  Variables variables;
};

std::once_flag g_once;
Binding g_binding;
bool g_bound = false;

// The address ranges of one loaded object: its PT_LOAD segments, code and
// data alike.  Why not dladdr for each symbol: glibc's dladdr scans the
// object's whole symbol table, and libhdf5 has thousands; 60 lookups cost
// about 1 ms, a third of a small session's create, commit and close.
class Segments {
 public:
  // The segments of the object whose mapping holds `address`; empty if none.
  static Segments holding(const void* address) {
    Segments found;
    found.probe_ = reinterpret_cast<uintptr_t>(address);
    dl_iterate_phdr(take_if_holding, &found);
    return found;
  }
  bool contains(const void* address) const {
    auto a = reinterpret_cast<uintptr_t>(address);
    for (auto [start, end] : ranges_)
      if (a >= start && a < end) return true;
    return false;
  }

 private:
  static int take_if_holding(dl_phdr_info* info, size_t, void* data) {
    auto& self = *static_cast<Segments*>(data);
    std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
      const auto& ph = info->dlpi_phdr[i];
      if (ph.p_type == PT_LOAD) ranges.emplace_back(info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
    }
    self.ranges_ = std::move(ranges);
    if (self.contains(reinterpret_cast<const void*>(self.probe_))) return 1;  // found: stop
    self.ranges_.clear();
    return 0;
  }

  uintptr_t probe_ = 0;
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges_;
};

// Where the bound library keeps its symbols, and how to look them up.
struct Lookup {
  void* lib;           // a handle on the bound library (or on the program)
  Segments own;        // the bound library's mapping
  bool global;         // the bound library is the one the global scope finds
  void* program;       // a handle on the program itself
};

// The address of `name` in the bound library, if it is defined there itself
// and not in one it depends on.
void* symbol_in(const Lookup& l, const char* name) {
  void* address = dlsym(l.lib, name);
  return address != nullptr && l.own.contains(address) ? address : nullptr;
}

// Where the bound library's code finds variable `name`.  A program linked
// with that library may hold the variable itself (a copy relocation: the
// program read it, through a macro such as H5P_FILE_ACCESS), and the
// library then uses the program's copy, which only the global scope finds.
// A library outside the global scope (a wheel's, loaded RTLD_LOCAL) has no
// such copy.
void* variable_in(const Lookup& l, const char* name) {
  if (!l.global) return symbol_in(l, name);
  void* address = dlsym(RTLD_DEFAULT, name);
  bool in_program = address != nullptr && dlsym(l.program, name) == address;
  return in_program ? address : symbol_in(l, name);
}

template <typename T>
void found(Binding& b, T& slot, void* address, const char* name) {
  slot = reinterpret_cast<T>(address);
  if (slot == nullptr) b.library.missing += (b.library.missing.empty() ? "" : ", ") + std::string(name);
}

bool bind(const void* code, Binding& b) {
  Dl_info info{};
  if (code == nullptr || dladdr(code, &info) == 0 || info.dli_fbase == nullptr) return false;
  b.library.path = info.dli_fname != nullptr && info.dli_fname[0] != '\0' ? info.dli_fname : "the program";
  b.library.base = info.dli_fbase;
  Lookup l{nullptr, Segments::holding(code), false, dlopen(nullptr, RTLD_LAZY)};
  // Already loaded: this only takes a handle on it.  A program with HDF5
  // linked in statically is the global scope's first object.
  l.lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (l.lib == nullptr) l.lib = l.program;
  void* h5open = dlsym(RTLD_DEFAULT, "H5open");
  l.global = h5open != nullptr && l.own.contains(h5open);
#define H5J_TAKE(ret, name, params, args) found(b, b.functions.name, symbol_in(l, #name), #name);
  H5J_FUNCTIONS(H5J_TAKE)
#undef H5J_TAKE
#define H5J_TAKE(name) found(b, b.variables.name, variable_in(l, #name), #name);
  H5J_VARIABLES(H5J_TAKE)
#undef H5J_TAKE
  return true;  // the handles stay open: the driver calls into the library from now on
}

[[noreturn]] void cannot_call(const char* name) {
  const LoadedHdf5* hdf5 = bound_hdf5();
  if (hdf5 == nullptr)
    std::fprintf(stderr, "h5journal: cannot call %s: the process has no HDF5 library the driver can find\n", name);
  else
    std::fprintf(stderr, "h5journal: cannot call %s: HDF5 at %s lacks %s\n", name, hdf5->path.c_str(),
                 hdf5->missing.c_str());
  std::abort();
}

template <typename F>
F function(F Functions::*slot, const char* name) {
  F f = bound_hdf5() != nullptr ? g_binding.functions.*slot : nullptr;
  if (f == nullptr) cannot_call(name);
  return f;
}

// Copies each variable from the bound library, writing only a changed
// value (HDF5 sets them again only if it is closed and opened again).
void copy_variables() {
#define H5J_COPY(name) \
  if (g_binding.variables.name != nullptr && ::name != *g_binding.variables.name) ::name = *g_binding.variables.name;
  H5J_VARIABLES(H5J_COPY)
#undef H5J_COPY
}

}  // namespace

const LoadedHdf5* bind_hdf5_at(const void* code) {
  std::call_once(g_once, [code] { g_bound = bind(code, g_binding); });
  return g_bound ? &g_binding.library : nullptr;
}

// Every forwarded call asks: after the first, only call_once's check.
const LoadedHdf5* bound_hdf5() {
  std::call_once(g_once, [] { g_bound = bind(dlsym(RTLD_DEFAULT, "H5open"), g_binding); });
  return g_bound ? &g_binding.library : nullptr;
}

}  // namespace h5j

// --- HDF5's names, forwarded -------------------------------------------------------

extern "C" {

#define H5J_DEFINE(name) hid_t name = H5I_INVALID_HID;
H5J_VARIABLES(H5J_DEFINE)
#undef H5J_DEFINE

#if H5_VERS_MAJOR >= 2
// HDF5 2.x's H5OPEN skips H5open once these say the library is up; kept
// false, H5OPEN always calls H5open below, which keeps the variables fresh.
bool H5_libinit_g = false;
bool H5_libterm_g = false;
#endif

#define H5J_FORWARD(ret, name, params, args) \
  ret name params { return h5j::function(&h5j::Functions::name, #name) args; }
H5J_SERIAL_FUNCTIONS(H5J_FORWARD)
H5J_PARALLEL_FUNCTIONS(H5J_FORWARD)
#undef H5J_FORWARD

// Not H5J_FORWARD: H5open also refreshes the variables.
herr_t H5open(void) {
  herr_t status = h5j::function(&h5j::Functions::H5open, "H5open")();
  h5j::copy_variables();
  return status;
}

// A variadic function cannot pass its arguments on: the message is
// formatted here and handed over whole.
herr_t H5Epush2(hid_t stack, const char* file, const char* func, unsigned line, hid_t cls, hid_t major, hid_t minor,
                const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  int length = std::vsnprintf(nullptr, 0, format, args);
  std::string message(length > 0 ? size_t(length) : 0, '\0');
  std::vsnprintf(message.data(), message.size() + 1, format, again);
  va_end(again);
  va_end(args);
  return h5j::function(&h5j::Functions::H5Epush2, "H5Epush2")(stack, file, func, line, cls, major, minor, "%s",
                                                              message.c_str());
}

}  // extern "C"
