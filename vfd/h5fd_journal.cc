// The HDF5 driver: its class table, the queries HDF5 makes of an open
// file, the FAPL's copies, and the public C API (H5Pset_fapl_journal,
// H5Fget_journal_stats) with the plugin's entry point.  Everything about
// journaling lives in journal/; the driver maps HDF5's calls onto it
// (driver_file.h lists its files).
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "driver.h"
#include "driver_file.h"
#include "posix_file.h"

namespace h5j {
namespace {

// Registration state, the only globals: the default driver id, the
// instances registered over other file systems (tests), the thread
// that closes removed journals, which must end before the driver's code
// may be unloaded (HDF5 unloads a plugin after unregistering it), and the
// buffers every file shares.  Both end with the driver's
// terminate, never by a static destructor: a plugin's static destructors
// run at exit before HDF5's exit handler, which unregisters the driver and
// so calls terminate.
hid_t g_driver_id = H5I_INVALID_HID;
std::vector<std::pair<hid_t, FileSystem*>> g_instances;
ClosingThread* g_closing_thread = nullptr;
SharedBuffers* g_shared_buffers = nullptr;

}  // namespace

// The file system of the driver a FAPL selects.
FileSystem& filesystem_for(hid_t fapl) {
  hid_t driver = H5Pget_driver(fapl);
  for (const auto& [id, fs] : g_instances)
    if (id == driver) return *fs;
  return posix_filesystem();
}

ClosingThread* closing_thread_for(FileSystem& fs) {
  if (&fs != &posix_filesystem()) return nullptr;
  if (g_closing_thread == nullptr) g_closing_thread = new ClosingThread;
  return g_closing_thread;
}

SharedBuffers& shared_buffers() {
  if (g_shared_buffers == nullptr) g_shared_buffers = new SharedBuffers;
  return *g_shared_buffers;
}

namespace {

int journal_cmp(const H5FD_t* a, const H5FD_t* b) {
  auto order = self(a)->id <=> self(b)->id;
  return order < 0 ? -1 : order > 0 ? 1 : 0;
}

herr_t journal_query(const H5FD_t* file, unsigned long* flags) {
  // The same choices as sec2 (aggregation, metadata accumulation, sieving),
  // plus DEFAULT_VFD_COMPATIBLE because a closed file is a canonical HDF5
  // file.  Not POSIX_COMPAT_HANDLE: writing through the descriptor would
  // bypass the journal.  Under MPI, mpio's choices: no accumulation or
  // sieving (each rank would hold its own stale copy), and HAS_MPI.
  if (flags == nullptr) return 0;
  *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_DEFAULT_VFD_COMPATIBLE;
  if (file != nullptr && self(file)->ranks) *flags |= H5FD_FEAT_HAS_MPI;
  else *flags |= H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE;
  return 0;
}

haddr_t journal_get_eoa(const H5FD_t* file, H5FD_mem_t) { return self(file)->eoa; }

herr_t journal_set_eoa(H5FD_t* file, H5FD_mem_t, haddr_t addr) {
  self(file)->eoa = addr;
  return 0;
}

haddr_t journal_get_eof(const H5FD_t* file, H5FD_mem_t) { return self(file)->file->size(); }

// H5Fget_journal_stats and H5Fwait_journal_durable ask through
// H5Fget_vfd_handle (the only way from a file id to its driver) with a FAPL
// holding this property: a pointer to a DriverRequest.  Only this driver
// answers it; any other returns its handle and leaves `answered` false.
constexpr const char* kDriverRequest = "h5journal.request";
struct DriverRequest {
  enum class Ask { kStats, kWaitDurable } ask = Ask::kStats;
  bool answered = false;
  H5FD_journal_stats_t stats{};
  Status waited;
};

herr_t journal_get_handle(H5FD_t* file, hid_t fapl, void** handle) {
  if (handle != nullptr && fapl != H5P_DEFAULT && H5Pexist(fapl, kDriverRequest) > 0) {
    DriverRequest* request = nullptr;
    if (H5Pget(fapl, kDriverRequest, &request) < 0 || request == nullptr) return -1;
    if (request->ask == DriverRequest::Ask::kWaitDurable) {
      request->waited = refuse_if_forked(*self(file));
      if (request->waited) request->waited = wait_durable(*self(file));
    } else {
      JournaledFile::Stats s = self(file)->file->stats();
      request->stats = {s.commits,         s.checkpoints,          s.raw_bytes_logged,
                        s.raw_index_bytes, s.raw_index_peak_bytes, s.durable_commits};
    }
    request->answered = true;
    *handle = request;
    return 0;
  }
  // The descriptor of the HDF5 file, for reading or fsync only.
  auto* posix = dynamic_cast<PosixFile*>(&self(file)->file->base().inner());
  if (handle == nullptr || posix == nullptr) return push_error("H5FD_journal_get_handle", H5E_BADVALUE, "no handle");
  static thread_local int fd;
  fd = posix->fd();
  *handle = &fd;
  return 0;
}

void* journal_fapl_get(H5FD_t* file) {
  if (self(file)->config_from_string) return nullptr;  // the string travels in the FAPL itself
  auto* copy = static_cast<H5FD_journal_fapl_t*>(std::malloc(sizeof(H5FD_journal_fapl_t)));
  if (copy != nullptr) *copy = self(file)->config;
  return copy;
}

void* journal_fapl_copy(const void* fapl) {
  auto* copy = static_cast<H5FD_journal_fapl_t*>(std::malloc(sizeof(H5FD_journal_fapl_t)));
  if (copy != nullptr) std::memcpy(copy, fapl, sizeof(H5FD_journal_fapl_t));
  return copy;
}

herr_t journal_fapl_free(void* fapl) {
  std::free(fapl);
  return 0;
}

// The MPI queries HDF5 makes of a driver with H5FD_FEAT_HAS_MPI.
herr_t journal_ctl(H5FD_t* file, uint64_t op, uint64_t flags, const void*, void** output) {
  RankGroup* ranks = self(file)->ranks.get();
  if (ranks != nullptr && ranks->answer_ctl(op, output)) return 0;
  if (flags & H5FD_CTL_FAIL_IF_UNKNOWN_FLAG)
    return push_error("H5FD_journal_ctl", H5E_FCNTL, "unknown op code " + std::to_string(op));
  return 0;
}

herr_t journal_terminate() {
  g_driver_id = H5I_INVALID_HID;
  g_instances.clear();
  delete std::exchange(g_closing_thread, nullptr);  // closes what waits
  delete std::exchange(g_shared_buffers, nullptr);  // HDF5 has closed every file
  return 0;
}

const H5FD_class_t kJournalClass = {
    H5FD_CLASS_VERSION,
    H5FD_JOURNAL_VALUE,
    H5FD_JOURNAL_NAME,
    HADDR_MAX,
    H5F_CLOSE_WEAK,
    journal_terminate,
    nullptr, nullptr, nullptr,  // sb_size, sb_encode, sb_decode
    sizeof(H5FD_journal_fapl_t),
    journal_fapl_get,
    journal_fapl_copy,
    journal_fapl_free,
    0, nullptr, nullptr,        // dxpl
    journal_open,
    journal_close,
    journal_cmp,
    journal_query,
    nullptr,                    // get_type_map
    nullptr, nullptr,           // alloc, free: HDF5's defaults
    journal_get_eoa,
    journal_set_eoa,
    journal_get_eof,
    journal_get_handle,
    journal_read,
    journal_write,
    journal_read_vector,
    journal_write_vector,
    nullptr,                    // read_selection: HDF5 translates to read_vector
    journal_write_selection,
    journal_flush,
    journal_truncate,
    nullptr, nullptr,           // lock, unlock: open locks (lock_like_hdf5)
    journal_delete,
    journal_ctl,
    H5FD_FLMAP_DICHOTOMY,
};

}  // namespace

const H5FD_class_t& journal_driver_class() { return kJournalClass; }

hid_t register_driver_with(FileSystem& fs) {
  H5FD_class_t cls = kJournalClass;
  cls.value = H5FD_JOURNAL_VALUE + 1;  // distinct from the plugin's, so lookups by value stay unambiguous
  cls.name = "journal_instrumented";
  hid_t id = H5FDregister(&cls);
  if (id >= 0) g_instances.emplace_back(id, &fs);
  return id;
}

}  // namespace h5j

// --- public C API and plugin entry points ---------------------------------------

namespace h5j {
namespace {

// h5journal.h's functions are called as HDF5's are, and report as they do.
// HDF5 clears the error stack as one of its API functions begins, and on
// failure prints the stack through the automatic handler (H5Eset_auto2,
// HDF5's H5Eprint2 unless the program changed it or turned it off, as
// h5py does).  Errors that an HDF5 call inside printed already are not
// printed again: only what these functions push themselves.
//
// A failure also leaves errno set, last, so that printing cannot change
// it: a caller that sees no stack (Python through ctypes, with h5py's
// printing off) still learns what the system said.
void begin_api_call() { H5Eclear2(H5E_DEFAULT); }

herr_t api_error(const char* func, hid_t minor, const std::string& message, int err = EINVAL) {
  push_error(func, minor, message);
  H5E_auto2_t print = nullptr;
  void* data = nullptr;
  if (H5Eget_auto2(H5E_DEFAULT, &print, &data) >= 0 && print != nullptr) print(H5E_DEFAULT, data);
  errno = err;
  return -1;
}

// The system's errno where a system call failed; else the closest one.
int errno_of(const Status& s) {
  if (s.sys_errno() != 0) return s.sys_errno();
  switch (s.code()) {
    case Code::kInvalid: return EINVAL;
    case Code::kNoSpace: return ENOSPC;
    case Code::kMissing: return ENOENT;
    default: return EIO;
  }
}

herr_t api_error(const char* func, hid_t minor, const Status& s) {
  return api_error(func, minor, error_text(s), errno_of(s));
}

}  // namespace
}  // namespace h5j

extern "C" {

hid_t H5FD_journal_init(void) {
  if (H5Iget_type(h5j::g_driver_id) != H5I_VFL) h5j::g_driver_id = H5FDregister(&h5j::kJournalClass);
  return h5j::g_driver_id;
}

herr_t H5Pget_fapl_journal_defaults(H5FD_journal_fapl_t* config) {
  h5j::begin_api_call();
  if (config == nullptr) return h5j::api_error("H5Pget_fapl_journal_defaults", H5E_BADVALUE, "config is NULL");
  *config = h5j::default_config();
  return 0;
}

herr_t H5Pset_fapl_journal(hid_t fapl_id, const H5FD_journal_fapl_t* config) {
  h5j::begin_api_call();
  H5FD_journal_fapl_t c = config != nullptr ? *config : h5j::default_config();
  if (h5j::Status s = h5j::validate_config(c); !s)
    return h5j::api_error("H5Pset_fapl_journal", H5E_BADVALUE, s);
  hid_t id = H5FD_journal_init();
  if (id < 0) return -1;  // HDF5 printed why
  return H5Pset_driver(fapl_id, id, &c);
}

herr_t H5Pget_fapl_journal(hid_t fapl_id, H5FD_journal_fapl_t* config) {
  h5j::begin_api_call();
  if (config == nullptr) return h5j::api_error("H5Pget_fapl_journal", H5E_BADVALUE, "config is NULL");
  hid_t driver = H5Pget_driver(fapl_id);
  if (driver < 0) return -1;  // HDF5 printed why
  if (driver != H5FD_journal_init())
    return h5j::api_error("H5Pget_fapl_journal", H5E_BADTYPE, "the file access property list does not use the journal driver");
  auto c = h5j::config_from_fapl(fapl_id);
  if (!c) return h5j::api_error("H5Pget_fapl_journal", H5E_BADVALUE, c.status());
  *config = c->values;
  return 0;
}

namespace h5j {
namespace {

// Asks the driver of `file_id` (DriverRequest); false, with HDF5's error
// stack telling why, if the file is not open through it.
bool ask_driver(const char* func, hid_t file_id, DriverRequest& request) {
  DriverRequest* pointer = &request;
  void* handle = nullptr;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0) return false;
  herr_t status =
      H5Pinsert2(fapl, kDriverRequest, sizeof pointer, &pointer, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (status >= 0) status = H5Fget_vfd_handle(file_id, fapl, &handle);
  H5Pclose(fapl);
  if (status < 0) {  // HDF5 printed why: not an open file's id
    errno = EINVAL;
    return false;
  }
  if (!request.answered) api_error(func, H5E_BADTYPE, "the file is not open through the journal driver");
  return request.answered;
}

}  // namespace
}  // namespace h5j

herr_t H5Fget_journal_stats(hid_t file_id, H5FD_journal_stats_t* stats) {
  h5j::begin_api_call();
  if (stats == nullptr) return h5j::api_error("H5Fget_journal_stats", H5E_BADVALUE, "stats is NULL");
  h5j::DriverRequest request;
  if (!h5j::ask_driver("H5Fget_journal_stats", file_id, request)) return -1;
  *stats = request.stats;
  return 0;
}

herr_t H5Fwait_journal_durable(hid_t file_id) {
  h5j::begin_api_call();
  h5j::DriverRequest request;
  request.ask = h5j::DriverRequest::Ask::kWaitDurable;
  if (!h5j::ask_driver("H5Fwait_journal_durable", file_id, request)) return -1;
  if (!request.waited) return h5j::api_error("H5Fwait_journal_durable", H5E_WRITEERROR, request.waited);
  return 0;
}


}  // extern "C"
