// An MPI program that opens with H5P_DEFAULT, as h5bench's FILE_PER_PROC
// does, under HDF5_DRIVER=journal (test/mpi/file_per_process_test.sh):
//   own    each rank creates and writes rank_<r>.h5 (mpi_comm=self, the
//          default: each file is its own process's);
//   shared every rank creates shared.h5 (mpi_comm=world: one file);
//   names  each rank passes its own name under mpi_comm=world, which must
//          fail on every rank with an error that says so;
//   refused every rank creates refused.h5 under mpi_comm=world, with
//          configurations the test's environment makes differ (one rank's
//          durability), which must fail likewise.
#include <hdf5.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

int rank = 0, nranks = 1;

int fail(const char* what) {
  std::fprintf(stderr, "file_per_process (rank %d): %s failed\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

// One row per rank of `ranks` rows, this rank's filled with its number.
bool write_rows(hid_t f, int ranks, int row) {
  hsize_t dims[2] = {hsize_t(ranks), 64};
  hid_t space = H5Screate_simple(2, dims, nullptr);
  hid_t d = H5Dcreate2(f, "rows", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t start[2] = {hsize_t(row), 0}, count[2] = {1, 64};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t memory = H5Screate_simple(2, count, nullptr);
  std::vector<int> values(64, rank + 1);
  bool ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_INT, memory, space, H5P_DEFAULT, values.data()) >= 0;
  H5Sclose(memory);
  H5Sclose(space);
  return ok && H5Dclose(d) >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  std::string mode = argc == 2 ? argv[1] : "";
  if (mode == "own" || mode == "shared") {
    std::string name = mode == "own" ? "rank_" + std::to_string(rank) + ".h5" : "shared.h5";
    hid_t f = H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) return fail("H5Fcreate");
    if (!write_rows(f, mode == "own" ? 1 : nranks, mode == "own" ? 0 : rank)) return fail("writing the rows");
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) return fail("H5Fflush");
    if (H5Fclose(f) < 0) return fail("H5Fclose");
  } else if (mode == "names" || mode == "refused") {
    std::string name = mode == "names" ? "named_" + std::to_string(rank) + ".h5" : "refused.h5";
    hid_t f = -1;
    H5E_BEGIN_TRY { f = H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT); }
    H5E_END_TRY
    if (f >= 0) return fail(mode == "names" ? "refusing different names under mpi_comm=world" : "refusing the open");
    H5Eprint2(H5E_DEFAULT, stderr);
  } else {
    if (rank == 0) std::fprintf(stderr, "usage: file_per_process own|shared|names|refused\n");
    MPI_Finalize();
    return 2;
  }
  MPI_Finalize();
  return 0;
}
