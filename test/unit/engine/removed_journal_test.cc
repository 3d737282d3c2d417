// A journal removed while its file is open for writing (removed_journal.cc):
// the next commit writes the file whole, as a close does, and stops the
// writer, instead of committing into an unlinked journal a crash would
// take with it.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "engine_test_util.h"

using namespace h5j;
using namespace h5j::test;

TEST_CASE_FIXTURE(FileInDir, "a journal removed while the file is open: the next commit writes the file and stops") {
  struct Case {
    const char* setting;
    bool durable;
    std::chrono::milliseconds within;
    bool readers_file_too;  // rm f.h5.jnl*, not only rm f.h5.jnl
  };
  const std::chrono::milliseconds none{0}, interval{100};
  for (Case c : {Case{"durable", true, none, false}, Case{"durable=false", false, none, false},
                 Case{"durable=100ms", false, interval, false}, Case{"durable", true, none, true},
                 Case{"durable=false", false, none, true}, Case{"durable=100ms", false, interval, true}}) {
    CAPTURE(c.setting);
    CAPTURE(c.readers_file_too);
    opts.ring.durable = c.durable;
    opts.durable_within = c.within;
    std::vector<std::byte> content = hdf5_like_file();
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, content, 0));
    REQUIRE((*f)->commit());
    REQUIRE(std::filesystem::remove(opts.journal_path));
    if (c.readers_file_too) REQUIRE(std::filesystem::remove(opts.journal_path + ".readers"));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past removed_journal.cc's millisecond
    std::vector<std::byte> step(100, std::byte(7));
    REQUIRE((*f)->write(20000, step, 0));  // under the commit: journaled
    std::copy(step.begin(), step.end(), content.begin() + 20000);
    Status s = (*f)->commit();
    REQUIRE(!s);
    CHECK(s.message().find(std::string("commit 2") + JournaledFile::kMadeThenFailed) == 0);
    CHECK(s.message().find(opts.journal_path + " was removed while " + path) != std::string::npos);
    CHECK(!(*f)->write(0, step, 0));  // fail-stop
    CHECK((*f)->close());
    // A plain file at commit 2: its bytes, unguarded, and nothing beside it.
    CHECK(test::read_file(path) == content);
    CHECK(!std::filesystem::exists(opts.journal_path + ".readers"));
    auto again = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE_MESSAGE(again, again.status().message());
    CHECK(read_all(**again) == content);
    REQUIRE((*again)->close());
  }
}
