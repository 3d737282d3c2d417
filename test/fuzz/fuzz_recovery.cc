// Fuzz target: full recovery (recover_file: replay, HDF5 status-flag
// fix-up, new generation, close) of an arbitrary journal beside a small valid
// HDF5 file, all in memory.  Recovery may only fail with an error or recover
// something: never crash, hang, read out of bounds or allocate without limit.
#include <hdf5.h>

#include <cstdlib>

#include "fuzz_input.h"
#include "mem_fs.h"
#include "recovery.h"

using namespace h5j;

namespace {

// A small HDF5 file (v3 superblock, so the status-flag fix-up has checksums
// to recompute), made once with the core driver.
const std::vector<std::byte>& small_hdf5_file() {
  static const std::vector<std::byte> image = [] {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, 4096, false);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    hid_t f = H5Fcreate("seed.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t n = 64;
    hid_t s = H5Screate_simple(1, &n, nullptr);
    H5Dclose(H5Dcreate2(f, "d", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Sclose(s);
    H5Fflush(f, H5F_SCOPE_GLOBAL);
    ssize_t size = H5Fget_file_image(f, nullptr, 0);
    std::vector<std::byte> out(size_t(size > 0 ? size : 0));
    if (size > 0) H5Fget_file_image(f, out.data(), out.size());
    H5Fclose(f);
    H5Pclose(fapl);
    return out;
  }();
  return image;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  explorer::Image image;
  image["f.h5"].data = small_hdf5_file();
  image["f.h5.jnl"].data = fuzz::journal_from(data, size);
  explorer::MemFileSystem fs(image);
  fs.limit_file_size(64 << 20);  // a hostile journal may name any address
  H5FD_journal_fapl_t config;
  H5Pget_fapl_journal_defaults(&config);
  config.io_engine = H5FD_JOURNAL_IO_SYNC;
  JournalOptions options = journal_options_for("f.h5", config, fs);
  options.recovery_mode = RecoveryMode(size > 1 ? data[1] % 4 : 0);  // every mode, salvage's resync too
  (void)recover_file("f.h5", options);
  return 0;
}
