// The data logs (data_logs.h): found by name, appended and read back, each
// record's bytes checked against its CRC, salvage's records chosen by
// generation and transaction, and a fresh start emptying what a log held.
#include <doctest/doctest.h>

#include <vector>

#include "data_logs.h"
#include "posix_file.h"
#include "test_util.h"

using namespace h5j;
using h5j::test::TempDir;

namespace {

JournalHeader header(uint64_t generation, uint32_t salt) {
  JournalHeader h;
  h.generation = generation;
  h.salt = salt;
  h.uuid[0] = 7;
  h.target_name = "f.h5";
  return h;
}

std::vector<std::byte> bytes_of(size_t n, int value) { return std::vector<std::byte>(n, std::byte(value)); }

// Appends `bytes` at `addr` as transaction `txn` of `logs`' own log.
DataPayload append(DataLogSet& logs, uint32_t log, uint64_t txn, uint64_t addr, const std::vector<std::byte>& bytes) {
  std::span<const std::byte> one[] = {bytes};
  auto index = logs.writer().append_extent(txn, log, RawPattern::contiguous(addr, bytes.size()), one);
  REQUIRE(index);
  return *index;
}

}  // namespace

TEST_CASE("a journal's data logs are found by name, gaps in the numbering and all") {
  TempDir dir;
  std::string jpath = dir.path("f.h5.jnl");
  for (std::string suffix : {".data", ".data.2", ".data.10", ".data.02", ".data.x", ".data.2.tmp", ".data.",
                             ".data.4294967296", ".replayed"})
    test::write_file(jpath + suffix, {});
  test::write_file(dir.path("g.h5.jnl.data.1"), {});  // another file's
  auto logs = existing_data_logs(posix_filesystem(), jpath);
  REQUIRE(logs);
  CHECK(*logs == std::vector<uint32_t>{0, 2, 10});
  REQUIRE(remove_data_logs(posix_filesystem(), jpath, true));
  CHECK(existing_data_logs(posix_filesystem(), jpath)->empty());
  CHECK(posix_filesystem().exists(jpath + ".data.2.tmp"));
  CHECK(posix_filesystem().exists(dir.path("g.h5.jnl.data.1")));
}

TEST_CASE("a data log's records read back, match their CRC until a byte changes, and are chosen by generation") {
  TempDir dir;
  std::string jpath = dir.path("f.h5.jnl");
  JournalHeader h = header(3, 11);
  {
    DataLogSet logs(posix_filesystem(), jpath, 2, IoEngine::kSync, false);
    REQUIRE(logs.start(h, /*fresh=*/true, RingOptions{2, 8192, true}));
    DataPayload first = append(logs, 2, 5, 0, bytes_of(3000, 1));
    DataPayload second = append(logs, 2, 6, 4096, bytes_of(20000, 2));  // spans the ring's buffers
    CHECK(first.log == 2);
    CHECK(second.log_offset > first.log_offset);
    REQUIRE(logs.writer().sync());
    CHECK(logs.generation_bytes() > 23000);
    std::vector<std::byte> back(20000);
    REQUIRE(logs.read(2, second.log_offset, back));  // through the ring, which may hold them yet
    CHECK(back == bytes_of(20000, 2));
  }
  DataLogSet reader(posix_filesystem(), jpath, 0, IoEngine::kSync, /*read_only=*/true);
  auto records = reader.records_of(h, 6, 9);
  REQUIRE(records);
  REQUIRE(records->size() == 1);
  const Record& r = records->front();
  CHECK(r.header.txn == 6);
  CHECK(r.data_log == 2);
  CHECK(r.write.length == 20000);
  CHECK(*reader.matches(r));
  CHECK(reader.records_of(h, 1, 9)->size() == 2);
  CHECK(reader.records_of(header(4, 11), 1, 9)->empty());  // another generation's
  CHECK(reader.records_of(header(3, 12), 1, 9)->empty());  // the same generation of another journal

  reader.close();
  auto log_bytes = test::read_file(data_log_path_for(jpath, 2));
  log_bytes[r.data_offset + 100] ^= std::byte(1);
  test::write_file(data_log_path_for(jpath, 2), log_bytes);
  CHECK_FALSE(*reader.matches(r));
  Record elsewhere = r;
  elsewhere.data_log = 5;
  CHECK(reader.matches(elsewhere).status().code() == Code::kMissing);
}

TEST_CASE("a fresh start empties what a data log held; a continued one keeps it") {
  TempDir dir;
  std::string jpath = dir.path("f.h5.jnl");
  JournalHeader h = header(1, 3);
  DataLogSet logs(posix_filesystem(), jpath, 0, IoEngine::kSync, false);
  REQUIRE(logs.start(h, true, RingOptions{2, 8192, true}));
  append(logs, 0, 1, 0, bytes_of(5000, 9));
  REQUIRE(logs.writer().sync());
  logs.stop();
  CHECK_FALSE(logs.appending());
  REQUIRE(logs.start(h, /*fresh=*/false, RingOptions{2, 8192, true}));
  logs.stop();
  CHECK(DataLogSet(posix_filesystem(), jpath, 0, IoEngine::kSync, true).records_of(h, 1, 1)->size() == 1);
  REQUIRE(logs.start(h, /*fresh=*/true, RingOptions{2, 8192, true}));
  logs.stop();
  CHECK(DataLogSet(posix_filesystem(), jpath, 0, IoEngine::kSync, true).records_of(h, 1, 1)->empty());
}
