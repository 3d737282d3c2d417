#include "data_logs.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <string_view>

#include "crc32c.h"

namespace h5j {
namespace {

// The number of the data log whose path is a journal's path followed by
// `suffix`: ".data" is 0, ".data.<n>" (n >= 1, no leading zero) is n, as
// data_log_path_for spells them; nullopt for any other suffix.
std::optional<uint32_t> data_log_number(std::string_view suffix) {
  constexpr std::string_view kData = ".data";
  if (suffix.substr(0, kData.size()) != kData) return std::nullopt;
  std::string_view rest = suffix.substr(kData.size());
  if (rest.empty()) return 0;
  if (rest.size() < 2 || rest[0] != '.' || rest[1] == '0') return std::nullopt;
  uint32_t n = 0;
  auto [end, err] = std::from_chars(rest.data() + 1, rest.data() + rest.size(), n);
  if (err != std::errc() || end != rest.data() + rest.size()) return std::nullopt;
  return n;
}

}  // namespace

bool names_a_data_log(const std::string& path) {
  for (size_t at = path.rfind(".data"); at != std::string::npos && at > 0; at = path.rfind(".data", at - 1))
    if (data_log_number(std::string_view(path).substr(at))) return true;
  return false;
}

Result<std::vector<uint32_t>> existing_data_logs(FileSystem& fs, const std::string& journal_path) {
  std::string base = data_log_path_for(journal_path);
  auto paths = fs.paths_with_prefix(base);
  if (!paths) return paths.status();
  std::vector<uint32_t> logs;
  for (const std::string& path : *paths)
    if (auto n = data_log_number(std::string_view(path).substr(journal_path.size()))) logs.push_back(*n);
  std::sort(logs.begin(), logs.end());
  return logs;
}

namespace {

Status remove_numbered(FileSystem& fs, const std::string& journal_path, const std::vector<uint32_t>& logs, bool sync) {
  bool removed = false;
  for (uint32_t n : logs) {
    std::string path = data_log_path_for(journal_path, n);
    if (!fs.exists(path)) continue;
    H5J_RETURN_IF_ERROR(fs.remove(path));
    removed = true;
  }
  return sync && removed ? fs.sync_dir(journal_path) : Status::ok();
}

}  // namespace

Status remove_data_logs(FileSystem& fs, const std::string& journal_path, bool sync) {
  auto logs = existing_data_logs(fs, journal_path);
  if (!logs) return logs.status();
  return remove_numbered(fs, journal_path, *logs, sync);
}

Status remove_data_logs_of_ranks(FileSystem& fs, const std::string& journal_path, uint32_t ranks, bool sync) {
  std::vector<uint32_t> logs(ranks);
  std::iota(logs.begin(), logs.end(), 0u);
  return remove_numbered(fs, journal_path, logs, sync);
}

Result<File*> DataLogSet::file(uint32_t log) {
  if (log < files_.size() && files_[log]) return files_[log].get();
  std::string path = data_log_path_for(journal_path_, log);
  if (!fs_.exists(path)) return static_cast<File*>(nullptr);
  auto file = fs_.open(path, read_only_ ? OpenMode::kReadOnly : OpenMode::kReadWrite, engine_);
  if (!file) return file.status();
  if (files_.size() <= log) files_.resize(size_t(log) + 1);
  files_[log] = std::move(*file);
  return files_[log].get();
}

Status DataLogSet::sync_every_log() {
  auto logs = existing_data_logs(fs_, journal_path_);
  if (!logs) return logs.status();
  for (uint32_t log : *logs) {
    auto f = file(log);
    if (!f) return f.status();
    if (*f != nullptr) H5J_RETURN_IF_ERROR((*f)->sync_data());
  }
  return Status::ok();
}

Status DataLogSet::read(uint32_t log, uint64_t offset, std::span<std::byte> out) {
  if (writer_ && log == own_) return writer_->read(offset, out);
  auto f = file(log);
  if (!f) return f.status();
  if (*f == nullptr) return Status(Code::kMissing, "data log " + data_log_path_for(journal_path_, log) + " is missing");
  return read_exact(**f, offset, out);
}

Result<bool> DataLogSet::matches(const Record& r) {
  auto log = file(r.data_log);
  if (!log) return log.status();
  if (*log == nullptr)
    return Status(Code::kMissing, "data log " + data_log_path_for(journal_path_, r.data_log) +
                                      " is missing, and the journal's committed transactions hold raw data in it");
  // One buffer for every record checked (recovery checks them all).
  check_buffer_.resize(1 << 20);
  uint32_t crc = 0;
  for (uint64_t done = 0; done < r.write.length;) {
    size_t n = size_t(std::min<uint64_t>(check_buffer_.size(), r.write.length - done));
    auto got = (*log)->read_at(r.data_offset + done, std::span(check_buffer_.data(), n));
    if (!got) return got.status();
    if (*got < n) return false;
    crc = crc32c(check_buffer_.data(), n, crc);
    done += n;
  }
  return mask_crc(crc) == r.data_crc;
}

// The data logs' records are self-describing: read on their own, they
// give back the index.  Every existing log is read, whatever gaps its
// numbering has.
Result<std::vector<Record>> DataLogSet::records_of(const JournalHeader& journal, uint64_t first, uint64_t last) {
  auto logs = existing_data_logs(fs_, journal_path_);
  if (!logs) return logs.status();
  std::vector<Record> out;
  for (uint32_t n : *logs) {
    auto log = file(n);
    if (!log) return log.status();
    if (*log == nullptr) continue;  // removed since it was listed
    auto reader = JournalReader::open(**log);
    if (!reader) continue;  // no valid header: nothing to rebuild from
    const JournalHeader& h = (*reader)->header();
    if (h.uuid != journal.uuid || h.generation != journal.generation || h.salt != journal.salt) continue;
    auto on_record = [&](const Record& r) {
      bool holds_bytes = r.header.type == RecordType::kData && r.header.payload_len > kDataPayloadSize;
      if (holds_bytes && r.header.txn >= first && r.header.txn <= last) out.push_back(r);
    };
    auto taken = for_each_salvaged_record(**reader, on_record, [](uint64_t, StreamEnd) {});
    if (!taken) return taken;
  }
  return out;
}

Status DataLogSet::start(const JournalHeader& h, bool fresh, RingOptions ring) {
  assert(!read_only_);
  writer_.reset();  // its writes done before the log is emptied
  if (files_.size() <= own_) files_.resize(size_t(own_) + 1);
  if (!files_[own_]) {
    auto log = fs_.open(data_log_path_for(journal_path_, own_), OpenMode::kCreate, engine_);
    if (!log) return log.status();
    files_[own_] = std::move(*log);
  }
  if (fresh) H5J_RETURN_IF_ERROR(files_[own_]->truncate(0));
  auto w = JournalWriter::start(*files_[own_], h, ring, false);
  if (!w) return w.status();
  writer_ = std::move(*w);
  return Status::ok();
}

}  // namespace h5j
