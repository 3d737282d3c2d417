// Transaction (transaction.h): the records a transaction leaves in the
// journal, the COMMENT naming its writer once per generation, the PLACED
// permission a commit grants, and PendingWrites' order of durability.
#include <doctest/doctest.h>

#include <vector>

#include "journal_reader.h"
#include "posix_file.h"
#include "test_util.h"
#include "transaction.h"

using namespace h5j;
using namespace h5j::test;

namespace {

JournalHeader header(uint64_t generation) {
  JournalHeader h;
  h.generation = generation;
  h.salt = uint32_t(generation * 7);
  h.first_txn = 1;
  h.target_name = "t.h5";
  return h;
}

struct JournalInDir {
  TempDir dir;
  std::string path = dir.path("t.h5.jnl");
  std::unique_ptr<File> journal;
  std::unique_ptr<Transaction> txn;

  JournalInDir() {
    auto file = posix_filesystem().open(path, OpenMode::kCreateTruncate, IoEngine::kSync);
    REQUIRE(file);
    journal = std::move(*file);
    auto writer = JournalWriter::start(*journal, header(1), RingOptions{2, 8192, true}, true);
    REQUIRE(writer);
    txn = std::make_unique<Transaction>(std::move(*writer), "h5journal session: test", false);
  }
  // The journal's records of its current generation, as type letters:
  // B(egin) N(comment) W(rite) Z(ero) P(laced) C(ommit).
  std::string records() {
    auto reader = JournalReader::open(*journal);
    REQUIRE(reader);
    std::string out;
    for (;;) {
      auto r = (*reader)->next();
      REQUIRE(r);
      if (!r->has_value()) return out;
      switch ((*r)->header.type) {
        case RecordType::kBegin: out += 'B'; break;
        case RecordType::kComment: out += 'N'; break;
        case RecordType::kWrite: out += 'W'; break;
        case RecordType::kZero: out += 'Z'; break;
        case RecordType::kPlaced: out += 'P'; break;
        case RecordType::kCommit: out += 'C'; break;
        default: out += '?';
      }
    }
  }
  Status commit(std::vector<UnwrittenSpace::Range> unwritten, bool readers) {
    return txn->commit(PendingWrites{}, nullptr, unwritten, {8192, 0, 0}, JournalWriter::CommitSync::kFlush,
                       [readers] { return readers; });
  }
};

}  // namespace

TEST_CASE_FIXTURE(JournalInDir, "a transaction opens once, names its writer once per generation, and commits") {
  REQUIRE(txn->begin());
  REQUIRE(txn->begin());  // already open
  CHECK(txn->open());
  std::vector<std::byte> bytes(100, std::byte(1));
  REQUIRE(txn->records().append_write(0, 0, bytes));
  txn->changed();
  CHECK(txn->dirty());
  REQUIRE(commit({}, false));
  CHECK_FALSE(txn->open());
  CHECK_FALSE(txn->dirty());
  REQUIRE(txn->begin());
  REQUIRE(commit({}, false));  // a commit opens the transaction it commits if none is
  REQUIRE(commit({}, false));
  CHECK(records() == "BNWCBCBC");

  REQUIRE(txn->start_generation(header(2)));
  REQUIRE(commit({}, false));
  CHECK(records() == "BNC");  // a generation's COMMENT names its writer again
}

TEST_CASE_FIXTURE(JournalInDir, "a commit declaring unwritten space allows PLACED writes until the next, without readers") {
  CHECK_FALSE(txn->placed_allowed());
  REQUIRE(commit({{4096, 1000}}, /*readers=*/false));
  CHECK(txn->placed_allowed());
  REQUIRE(txn->begin());
  REQUIRE(txn->append_placed(4096, 500));
  REQUIRE(commit({}, false));  // declaring nothing
  CHECK_FALSE(txn->placed_allowed());
  REQUIRE(commit({{4096, 1000}}, /*readers=*/true));  // a reader's snapshot could read what lands there
  CHECK_FALSE(txn->placed_allowed());
  REQUIRE(commit({{4096, 1000}}, false));
  txn->forbid_placed();
  CHECK_FALSE(txn->placed_allowed());
  REQUIRE(commit({{4096, 1000}}, false));
  REQUIRE(txn->start_generation(header(2)));  // the new generation holds no ZERO record
  CHECK_FALSE(txn->placed_allowed());
  CHECK(records() == "");
}

TEST_CASE_FIXTURE(JournalInDir, "the readers are asked after the COMMIT is written, never before") {
  size_t records_when_asked = 0;
  REQUIRE(txn->commit(PendingWrites{}, nullptr, {{4096, 1000}}, {8192, 0, 0}, JournalWriter::CommitSync::kFlush, [&] {
    records_when_asked = records().size();
    return false;
  }));
  CHECK(records() == "BNZC");
  CHECK(records_when_asked == 4);
}

// Every fsync and fdatasync, by descriptor, in order.
struct SyncedFds : Syscalls {
  std::vector<int> fds;
  int fdatasync(int fd) override {
    fds.push_back(fd);
    return Syscalls::fdatasync(fd);
  }
  int fsync(int fd) override {
    fds.push_back(fd);
    return Syscalls::fsync(fd);
  }
};

TEST_CASE("pending writes are made durable, the file's before the data log's, and then nothing is pending") {
  TempDir dir;
  std::string path = dir.path("t.h5"), journal = path + ".jnl";
  SyncedFds syncs;
  PosixFileSystem fs(syncs);
  auto file = fs.open(path, OpenMode::kCreateTruncate, IoEngine::kSync);
  REQUIRE(file);
  int base_fd = dynamic_cast<PosixFile&>(**file).fd();
  ImageLayers image(20, false);
  UnwrittenSpace unwritten;
  WriteAheadFile base(std::move(*file), image, unwritten);
  DataLogSet logs(fs, journal, 0, IoEngine::kSync, false);
  REQUIRE(logs.start(header(1), true, RingOptions{2, 8192, true}));
  int log_fd = dynamic_cast<PosixFile&>(**logs.file(0)).fd();
  PendingWrites pending;
  CHECK_FALSE(pending.any());
  syncs.fds.clear();
  REQUIRE(pending.make_durable(base, logs, true, false));
  CHECK(syncs.fds.empty());  // nothing pending, nothing synced

  pending.wrote_in_place();
  pending.logged();
  CHECK(pending.any());
  REQUIRE(pending.make_durable(base, logs, /*durable=*/true, /*whole_file=*/false));
  CHECK_FALSE(pending.any());
  CHECK(syncs.fds == std::vector<int>{base_fd, log_fd});

  syncs.fds.clear();
  pending.logged();
  REQUIRE(pending.make_durable(base, logs, true, /*whole_file=*/true));  // a first commit: the file always
  CHECK(syncs.fds == std::vector<int>{base_fd, log_fd});
}
