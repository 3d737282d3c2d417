// Opens FILE read-write through the journal driver and closes it: open-time
// recovery (replay, checkpoint, journal removed), for timing.
#include <hdf5.h>

#include "h5journal.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_journal(fapl, nullptr);
  hid_t f = H5Fopen(argv[1], H5F_ACC_RDWR, fapl);
  return f < 0 || H5Fclose(f) < 0;
}
