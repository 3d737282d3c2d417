// Writes the journals in this directory with an older engine, so that the
// readers of today are tested against bytes an older writer really wrote
// (unit_format_test.cc, "journals of older format versions").
//
// Built against the engine of the commit that last wrote each version:
//   v1: 110b8dc^   v2: 0d77df2^   v3: f5e78db   v4: 0391ce3   v5: 1075e1b   v6: 8304ae9
//   v7: 6a0e636
//   (the last commits before v2 to v8: v3 by that commit's engine, v4 added
//   PLACED records, v5 the fingerprint and the COMMIT's file size, v6
//   INPLACE records, v7 the COMMIT's durable transaction, v8 packed commits)
// with, for each version V and commit C:
//   git worktree add /tmp/old C
//   g++ -std=c++20 -O1 -I/tmp/old/journal [-DWITH_RAW_LOG for v2 to v7] \
//       test/data/old_journals/make_old_journal.cc /tmp/old/journal/*.cc -luring -lisal -o make_vV
//   (v5 to v7: the engine is in folders: -I each of /tmp/old/journal/*/, and
//   /tmp/old/journal/*/*.cc, and -lcrypto from v6; remove the readers file it
//   leaves, and give old.h5 back its write bits)
//   (cd test/data/old_journals/vV && ../../../../make_vV)
// The program writes old.h5, its journal old.h5.jnl (and the data log
// old.h5.jnl.data for v2 to v7), then "crashes" (drops the file unclosed), and
// writes expected.bin: the bytes recovery must give back.
#include <cstdio>
#include <fstream>
#include <vector>

#include "journaled_file.h"

using namespace h5j;

namespace {

std::vector<std::byte> model;

std::vector<std::byte> bytes(size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte((seed * 31 + i * 7) & 0xff);
  return v;
}

void put(uint64_t addr, const std::vector<std::byte>& b) {
  if (model.size() < addr + b.size()) model.resize(addr + b.size());
  std::copy(b.begin(), b.end(), model.begin() + long(addr));
}

void must(const Status& s) {
  if (!s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    std::exit(1);
  }
}

}  // namespace

int main() {
  JournalOptions opts;
  opts.journal_path = "old.h5.jnl";
  opts.ring.durable = false;  // no zeros written ahead: small files to check in
#ifdef WITH_RAW_LOG
  opts.raw_mode = RawMode::kLog;
#endif
  auto f = JournaledFile::open("old.h5", Access::kCreateTruncate, opts);
  must(f.status());
  JournaledFile& file = **f;
  // Transaction 1: WRITE records.
  auto a = bytes(4096, 1), b = bytes(100, 2);
  must(file.write(0, a, 1));
  must(file.write(8192, b, 1));
  put(0, a);
  put(8192, b);
  must(file.commit());
  // Transaction 2: an overwrite, a shrink below the committed size (a ZERO
  // record), and a write past the cut.
  auto c = bytes(50, 3), d = bytes(64, 4);
  must(file.write(100, c, 1));
  put(100, c);
  must(file.set_size(6000));
  model.resize(6000);
  must(file.write(9000, d, 1));
  put(9000, d);
  must(file.commit());
#ifdef WITH_RAW_LOG
  // Transaction 3: raw data in the data log (a DATA record).
  auto e = bytes(3000, 5);
  must(file.write_raw(20000, e, 0));
  put(20000, e);
  must(file.commit());
#endif
  // Never committed: recovery must not apply it.
  must(file.write(0, bytes(10, 6), 1));
  f->reset();  // a crash: the files are released without a commit
  std::ofstream("expected.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(model.data()), std::streamsize(model.size()));
  return 0;
}
