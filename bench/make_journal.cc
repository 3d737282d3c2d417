// Writes a file through the journal driver whose journal holds N MiB of
// committed transactions, then exits without closing (a crash), leaving the
// pair for timing recovery.  Each transaction overwrites a committed 64 MiB
// dataset in 1 MiB pieces, so every byte is journaled.
#include <hdf5.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <vector>

#include "h5journal.h"

int main(int argc, char** argv) {
  std::string file;
  int mib = 64;
  CLI::App app{"Leaves FILE and a journal of about N MiB of committed transactions, as a crash would"};
  app.add_option("file", file)->required();
  app.add_option("--mib", mib, "journal size in MiB");
  CLI11_PARSE(app, argc, argv);
  H5FD_journal_fapl_t c;
  H5Pget_fapl_journal_defaults(&c);
  c.checkpoint_bytes = uint64_t(mib + 64) << 20;  // no checkpoint: everything stays in the journal
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_journal(fapl, &c);
  hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hsize_t n = 8 << 20;  // 64 MiB of doubles
  hid_t space = H5Screate_simple(1, &n, nullptr);
  hid_t ds = H5Dcreate2(f, "data", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<double> v(n, 1.0);
  H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  H5Fflush(f, H5F_SCOPE_GLOBAL);
  hsize_t piece = 128 << 10, count = piece;  // 1 MiB
  hid_t mspace = H5Screate_simple(1, &count, nullptr);
  for (int i = 0; i < mib; ++i) {
    hsize_t start = (hsize_t(i) * piece) % n;
    hid_t fs = H5Dget_space(ds);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, nullptr, &count, nullptr);
    std::vector<double> p(piece, double(i));
    H5Dwrite(ds, H5T_NATIVE_DOUBLE, mspace, fs, H5P_DEFAULT, p.data());
    H5Sclose(fs);
    if (i % 8 == 7) H5Fflush(f, H5F_SCOPE_GLOBAL);
  }
  H5Fflush(f, H5F_SCOPE_GLOBAL);
  _exit(0);  // no close: the journal stays, as after a crash
}
