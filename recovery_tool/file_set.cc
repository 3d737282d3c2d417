#include "file_set.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "binding.h"
#include "posix_file.h"
#include "superblock.h"
#include "superblock_guard.h"

namespace h5j {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A journal (NAME.jnl), a data log (NAME.jnl.data, NAME.jnl.data.N), a
// readers file (NAME.jnl.readers) or a journal kept by --keep-journal
// (NAME.jnl.replayed).
bool is_journal_name(const std::string& name) {
  return ends_with(name, ".jnl") || name.find(".jnl.data") != std::string::npos || ends_with(name, ".jnl.readers") ||
         ends_with(name, ".jnl.replayed");
}

// A journal journal_path=DIR/ named: NAME.<16 hex digits>.jnl (config.h).
// Its file's directory is not in its name, so a missing file cannot be named.
bool is_journal_in_directory(const std::string& name) {
  constexpr size_t kTag = 16, kTail = 1 + kTag + 4;  // ".<hex>.jnl"
  if (name.size() <= kTail || !ends_with(name, ".jnl") || name[name.size() - kTail] != '.') return false;
  std::string tag = name.substr(name.size() - kTail + 1, kTag);
  return tag.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// An HDF5 superblock (guarded or not), the older log-form guard, or a binding
// to a journal.
bool looks_journaled_or_hdf5(const std::string& path) {
  auto f = posix_filesystem().open(path, OpenMode::kReadOnly, IoEngine::kSync);
  if (!f) return true;  // unreadable: let recovery report why
  std::byte head[sizeof kLogFormGuard];
  auto n = (*f)->read_at(0, head);
  if (n && *n == sizeof head && std::equal(head, head + sizeof head, reinterpret_cast<const std::byte*>(kLogFormGuard)))
    return true;
  auto binding = read_binding(**f);
  if (binding && binding->has_value()) return true;
  auto size = (*f)->size();
  if (!size) return true;
  SuperblockGuardFile file(std::move(*f));  // a guarded superblock reads as HDF5 wrote it
  FileImageView view(file, *size);
  auto sb = find_superblock(view);
  return sb && sb->has_value();
}

}  // namespace

Result<std::vector<std::string>> files_under(const std::string& dir,
                                             const std::function<std::string(const std::string&)>& journal_of) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status(Code::kInvalid, "--recursive: " + dir + " is not a directory");
  std::vector<std::string> found;
  std::vector<fs::path> orphans;  // journals whose file is not beside them
  std::set<fs::path> claimed;     // journals a file found leads to (its binding: a file moved aside)
  auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string path = it->path().string(), name = it->path().filename().string();
    if (is_journal_name(name)) {
      std::string base = path.substr(0, path.size() - 4);
      if (ends_with(name, ".jnl") && !is_journal_in_directory(name) && !fs::exists(base, ec)) orphans.push_back(path);
      continue;
    }
    std::string journal = journal_of(path);
    bool journaled = fs::exists(journal, ec);
    if (journaled) claimed.insert(fs::weakly_canonical(journal, ec));
    if (journaled || looks_journaled_or_hdf5(path)) found.push_back(path);
  }
  if (ec) return Status::from_errno(ec.value(), "walk " + dir);
  // A journal whose file is gone, and that no file found leads to: report
  // the file as missing.
  for (const fs::path& journal : orphans) {
    if (claimed.contains(fs::weakly_canonical(journal, ec))) continue;
    const std::string& name = journal.string();
    found.push_back(name.substr(0, name.size() - 4));
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

}  // namespace h5j
