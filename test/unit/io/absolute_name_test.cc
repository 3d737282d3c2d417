// absolute_name (io/file.h): the names a writer keeps past a change of
// working directory.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "file.h"
#include "test_util.h"

using namespace h5j;

namespace {
// The working directory set for a test case, and set back after it.
class InDirectory {
 public:
  InDirectory() { REQUIRE(::getcwd(saved_, sizeof saved_) != nullptr); }
  ~InDirectory() { (void)::chdir(saved_); }

 private:
  char saved_[PATH_MAX];
};
}  // namespace

TEST_CASE("a relative name is made absolute from the working directory at the call") {
  test::TempDir dir;
  InDirectory restore;
  REQUIRE(::chdir(dir.path("").c_str()) == 0);
  char cwd[PATH_MAX];
  REQUIRE(::getcwd(cwd, sizeof cwd) != nullptr);
  CHECK(absolute_name("run.h5") == std::string(cwd) + "/run.h5");
  CHECK(absolute_name("/elsewhere/run.h5") == "/elsewhere/run.h5");
}

TEST_CASE("a name deeper than the system opens by its absolute name stays as given") {
  test::TempDir dir;
  InDirectory restore;
  REQUIRE(::chdir(dir.path("").c_str()) == 0);
  const std::string level(200, 'd');
  size_t depth = 0;
  for (; depth * (level.size() + 1) < PATH_MAX; ++depth) {
    REQUIRE(::mkdir(level.c_str(), 0755) == 0);
    REQUIRE(::chdir(level.c_str()) == 0);
  }
  CHECK(absolute_name("run.h5") == "run.h5");
  // Taken down level by level: a tree this deep is past what removal by
  // whole names (TempDir's) can reach.
  for (; depth > 0; --depth) {
    REQUIRE(::chdir("..") == 0);
    REQUIRE(::rmdir(level.c_str()) == 0);
  }
}
