#include "journaled_file.h"

#include <sys/random.h>
#include <filesystem>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>
#include <utility>

#include "coding.h"
#include "crc32c.h"

namespace h5j {
namespace {

void random_bytes(void* out, size_t n) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    ssize_t got = ::getrandom(p, n, 0);
    if (got <= 0) continue;  // EINTR; getrandom does not fail otherwise once seeded
    p += got;
    n -= size_t(got);
  }
}

// The binding attribute: 16-byte UUID, the generation (u64, little-endian),
// then the journal's absolute path, so h5recover finds a journal kept
// elsewhere (journal_path=...).
std::string encode_binding(const std::array<uint8_t, 16>& uuid, uint64_t generation, const std::string& journal) {
  std::string v(24, '\0');
  std::memcpy(v.data(), uuid.data(), 16);
  put_u64(reinterpret_cast<std::byte*>(v.data() + 16), generation);
  std::error_code ec;
  auto absolute = std::filesystem::absolute(journal, ec);
  return v + (ec ? journal : absolute.string());
}

std::string hex(const std::array<uint8_t, 16>& uuid) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t b : uuid) s += {d[b >> 4], d[b & 15]};
  return s;
}

OpenMode open_mode(Access a) {
  switch (a) {
    case Access::kReadOnly: return OpenMode::kReadOnly;
    case Access::kReadWrite: return OpenMode::kReadWrite;
    case Access::kTruncate: return OpenMode::kTruncate;
    case Access::kCreate: return OpenMode::kCreate;
    case Access::kCreateTruncate: return OpenMode::kCreateTruncate;
    case Access::kCreateExclusive: return OpenMode::kCreateExclusive;
  }
  return OpenMode::kReadOnly;
}

}  // namespace

std::string journal_target_name(const std::string& path) {
  auto slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return name.substr(0, kMaxTargetName);
}

JournaledFile::JournaledFile(std::unique_ptr<File> base, JournalOptions opts, bool read_only)
    : base_(std::move(base)), opts_(std::move(opts)), read_only_(read_only) {}

JournaledFile::~JournaledFile() {
  writer_.reset();  // waits for writes in flight before the buffers go
  data_writer_.reset();
}

Result<std::unique_ptr<JournaledFile>> JournaledFile::open(const std::string& path, Access access,
                                                           const JournalOptions& opts) {
  if (opts.journal_path.empty()) return Status(Code::kInvalid, "no journal path for " + path);
  if (opts.ring.buffers < 2) return Status(Code::kInvalid, "ring_buffers must be at least 2");
  auto base = opts.fs->open(path, open_mode(access), IoEngine::kSync);
  if (!base) return base.status();
  bool read_only = access == Access::kReadOnly;
  std::unique_ptr<JournaledFile> f(new JournaledFile(std::move(*base), opts, read_only));
  auto size = f->base_->size();
  if (!size) return size.status();
  f->logical_size_ = f->committed_size_ = *size;
  Status s = read_only ? f->open_for_read()
             : f->follower() ? f->open_as_follower()
                             : f->open_for_write(truncates(access));
  if (!s) return s;
  return f;
}

// --- opening -----------------------------------------------------------------

Status JournaledFile::open_for_read() {
  auto journal = opts_.fs->open(opts_.journal_path, OpenMode::kReadOnly, IoEngine::kSync);
  if (!journal && journal.status().code() == Code::kMissing) return check_not_missing();  // else a plain file
  if (!journal) return journal.status();
  journal_ = std::move(*journal);
  report_.journal_found = true;
  if (Status s = journal_->try_lock(LockMode::kShared); !s) {
    if (s.code() != Code::kBusy) return s;
    report_.passive = true;  // a writer owns it; HDF5 will reuse or refuse this handle
    journal_.reset();
    return Status::ok();
  }
  H5J_RETURN_IF_ERROR(load_journal());
  if (!plan_) return Status::ok();
  raw_ = std::move(plan_->raw);
  overlay_ = std::move(plan_->overlay);
  logical_size_ = committed_size_ = plan_->logical_size;
  if (opts_.after_replay && report_.recovered) H5J_RETURN_IF_ERROR(opts_.after_replay(*this));
  return Status::ok();
}

Status JournaledFile::open_for_write(bool truncated) {
  bool existed = opts_.fs->exists(opts_.journal_path);
  if (!existed && !truncated) H5J_RETURN_IF_ERROR(check_not_missing());
  auto journal = opts_.fs->open(opts_.journal_path, OpenMode::kCreate, opts_.engine);
  if (!journal) return journal.status();
  journal_ = std::move(*journal);
  if (Status s = journal_->try_lock(LockMode::kExclusive); !s) {
    if (s.code() != Code::kBusy) return s;
    // A writer in another process: refused now, so that HDF5 never takes
    // the file for an empty one (its bytes may all be in the journal yet).
    // One in this process: HDF5's tentative second open of a file it has
    // open, which HDF5 closes once it finds the open one (passive).
    if (std::optional<int> holder = journal_->lock_holder(); holder && *holder != getpid())
      return busy_error(*holder);
    report_.passive = true;
    journal_.reset();
    return Status::ok();
  }
  // The journal of a file being truncated is discarded, but only once we own
  // its lock: it might belong to a live writer.
  Status s = truncated ? journal_->truncate(0) : Status::ok();
  // Any journal that exists, even an empty one, means the last session did
  // not close cleanly.
  report_.journal_found = existed && !truncated;
  if (s) s = start_writing();
  if (!s && !existed) {
    // Leave no journal of ours behind: it would hide the failure next time.
    journal_.reset();
    (void)opts_.fs->remove(opts_.journal_path);
  }
  return s;
}

Status JournaledFile::check_not_missing() { return check_binding_not_missing(*base_, opts_.journal_path); }

Status JournaledFile::start_writing() {
  std::array<uint8_t, 16> uuid{};
  uint64_t generation = 1, first_txn = 1;
  if (report_.journal_found) {
    H5J_RETURN_IF_ERROR(load_journal());
    if (plan_) {
      generation = plan_->summary.header.generation + 1;
      first_txn = std::max(plan_->summary.last_committed_txn + 1, plan_->summary.header.first_txn);
      uuid = plan_->summary.header.uuid;
      H5J_RETURN_IF_ERROR(replay_into_base());
    }
  }
  // A journal found without a header (its first commit crashed before the
  // header was durable, though the binding was) keeps the binding's identity
  // and moves past its generation, so the two keep agreeing through any
  // crash that follows.
  auto binding = read_binding();
  if (!binding) return binding.status();
  if (binding->has_value() && report_.journal_found && !plan_) {
    uuid = (*binding)->uuid;
    generation = (*binding)->generation + 1;
  }
  if (uuid == std::array<uint8_t, 16>{}) random_bytes(uuid.data(), uuid.size());
  H5J_RETURN_IF_ERROR(start_generation(generation, first_txn, uuid));
  // A journal that was found exists durably, so the binding may name it now;
  // a new journal is bound at its first commit, once its name is durable.
  return report_.journal_found ? set_binding() : Status::ok();
}

Status JournaledFile::set_binding() {
  const JournalHeader& h = writer_->header();
  auto set = base_->set_xattr(kBindingXattr, encode_binding(h.uuid, h.generation, opts_.journal_path));
  if (!set) return set.status();
  binding_set_ = true;
  return Status::ok();
}

Status JournaledFile::load_journal() {
  auto reader = JournalReader::open(*journal_);
  if (!reader) {
    // A journal whose header never became durable held no commit.
    if (reader.status().code() == Code::kMissing) return Status::ok();
    return Status(Code::kCorrupt, reader.status().message() + "; run h5recover " + base_->path());
  }
  H5J_RETURN_IF_ERROR(check_binding((*reader)->header()));
  DataLogAccess data_log;
  data_log.matches = [this](const Record& r) { return data_matches(r); };
  const JournalHeader& header = (*reader)->header();
  data_log.records_of = [this, &header](uint64_t first, uint64_t last) { return data_log_records(header, first, last); };
  auto plan = plan_replay(**reader, opts_.recovery_mode, data_log);
  if (!plan) return plan.status().prefixed(journal_->path() + ": ");
  report_.replayed_txns = plan->summary.committed_txns;
  report_.last_txn = plan->summary.last_committed_txn;
  report_.discarded_records = plan->summary.discarded_records;
  report_.generation = plan->summary.header.generation;
  report_.bytes_applied = plan->bytes_to_apply;
  report_.logical_size = plan->logical_size;
  report_.end = plan->summary.end;
  report_.end_detail = (*reader)->end_detail();
  report_.skipped = plan->skipped;
  report_.rebuilt_txns = plan->rebuilt_txns;
  // Recovery is needed if any transaction committed, or if the file is not at
  // the size the generation started from (uncommitted in-place writes).
  auto size = base_->size();
  if (!size) return size.status();
  bool needs_replay = plan->summary.committed_txns > 0 || *size != plan->logical_size;
  // A journal with a valid header means the file was not closed cleanly, even
  // when nothing waits in it (a crash right after a checkpoint): recovery's
  // fix-ups (after_replay) are still due.
  report_.recovered = true;
  if (needs_replay && !opts_.recover_on_open)
    return Status(Code::kNeedsRecovery,
                  base_->path() + " has " + std::to_string(plan->summary.committed_txns) +
                      " committed transaction(s) in journal " + opts_.journal_path +
                      " that are not yet in the file (recovery=refuse); run h5recover " + base_->path());
  plan_ = std::move(*plan);
  return Status::ok();
}

Result<File*> JournaledFile::data_log_file(uint32_t log) {
  if (log < data_logs_.size() && data_logs_[log]) return data_logs_[log].get();
  std::string path = data_log_path_for(opts_.journal_path, log);
  if (!opts_.fs->exists(path)) return static_cast<File*>(nullptr);
  auto file = opts_.fs->open(path, read_only_ ? OpenMode::kReadOnly : OpenMode::kReadWrite, opts_.engine);
  if (!file) return file.status();
  if (data_logs_.size() <= log) data_logs_.resize(size_t(log) + 1);
  data_logs_[log] = std::move(*file);
  return data_logs_[log].get();
}

Result<bool> JournaledFile::data_matches(const Record& r) {
  auto log = data_log_file(r.data_log);
  if (!log) return log.status();
  if (*log == nullptr)
    return Status(Code::kMissing, "data log " + data_log_path_for(opts_.journal_path, r.data_log) +
                                      " is missing, and the journal's committed transactions hold raw data in it");
  // One buffer for every record checked (recovery checks them all).
  std::vector<std::byte>& piece = check_buffer_;
  piece.resize(1 << 20);
  uint32_t crc = 0;
  for (uint64_t done = 0; done < r.write.length;) {
    size_t n = size_t(std::min<uint64_t>(piece.size(), r.write.length - done));
    auto got = (*log)->read_at(r.data_offset + done, std::span(piece.data(), n));
    if (!got) return got.status();
    if (*got < n) return false;  // the data log ends before the bytes do
    crc = crc32c(piece.data(), n, crc);
    done += n;
  }
  return mask_crc(crc) == r.data_crc;
}

// The data logs' records are self-describing: read on their own, they
// give back the index.  Only records of the journal's generation (same salt
// and UUID) count; damage is skipped, as salvage skips it in the journal.
// Every existing log is read, whatever gaps its numbering has.
Result<std::vector<Record>> JournaledFile::data_log_records(const JournalHeader& journal, uint64_t first,
                                                            uint64_t last) {
  auto logs = existing_data_logs(*opts_.fs, opts_.journal_path);
  if (!logs) return logs.status();
  std::vector<Record> out;
  for (uint32_t n : *logs) {
    auto log = data_log_file(n);
    if (!log) return log.status();
    if (*log == nullptr) continue;  // removed since it was listed
    auto reader = JournalReader::open(**log);
    if (!reader) continue;  // no valid header: nothing to rebuild from
    const JournalHeader& h = (*reader)->header();
    if (h.uuid != journal.uuid || h.generation != journal.generation || h.salt != journal.salt) continue;
    for (;;) {
      auto rec = (*reader)->next();
      if (!rec) return rec.status();
      if (!rec->has_value()) {
        if (clean_end((*reader)->end())) break;
        auto later = (*reader)->resync((*reader)->end_offset() + 8, /*begin_only=*/false);
        if (!later) return later.status();
        if (!later->has_value()) break;
        (*reader)->seek(**later);
        continue;
      }
      const Record& r = **rec;
      bool holds_bytes = r.header.type == RecordType::kData && r.header.payload_len > kDataPayloadSize;
      if (holds_bytes && r.header.txn >= first && r.header.txn <= last) out.push_back(r);
    }
  }
  return out;
}

Result<std::optional<Binding>> read_binding(File& file) {
  auto value = file.get_xattr(kBindingXattr);
  if (!value) return value.status();
  if (!value->has_value() || (*value)->size() < 24) return std::optional<Binding>();
  Binding b;
  std::memcpy(b.uuid.data(), (*value)->data(), 16);
  b.generation = get_u64(reinterpret_cast<const std::byte*>((*value)->data() + 16));
  b.journal_path = (*value)->substr(24);
  return std::optional<Binding>(b);
}

Result<std::optional<Binding>> JournaledFile::read_binding() { return h5j::read_binding(*base_); }

Status check_binding_not_missing(File& base, const std::string& journal) {
  auto binding = read_binding(base);
  if (!binding) return binding.status();
  if (!binding->has_value()) return Status::ok();
  const std::string& recorded = (*binding)->journal_path;
  return Status(Code::kMissing, base.path() + " was being written through h5journal, but its journal " +
                                    (recorded.empty() ? journal : recorded) + " is missing; committed changes may be lost");
}

Status JournaledFile::check_binding(const JournalHeader& h) {
  auto binding = read_binding();
  if (!binding) return binding.status();
  if (binding->has_value()) {
    const Binding& b = **binding;
    if (b.uuid != h.uuid)
      return Status(Code::kForeign, "journal " + opts_.journal_path + " belongs to another file (journal " +
                                        hex(h.uuid) + ", file bound to " + hex(b.uuid) + ")");
    if (b.generation > h.generation)
      return Status(Code::kForeign, "journal " + opts_.journal_path + " is older than " + base_->path() +
                                        " (generation " + std::to_string(h.generation) + ", file at " +
                                        std::to_string(b.generation) + ")");
    return Status::ok();
  }
  // No attribute (a filesystem without xattrs, or a copy that dropped it):
  // fall back to the file name recorded in the journal.
  if (h.target_name != target_name())
    return Status(Code::kForeign, "journal " + opts_.journal_path + " belongs to another file (written for \"" +
                                      h.target_name + "\")");
  return Status::ok();
}

Status JournaledFile::replay_into_base() {
  // Past its last commit the journal holds nothing recovery needs (the zeros
  // written ahead of the records, an uncommitted tail, stale records).
  // Giving that space back first lets a full disk take the replayed bytes.
  auto journal_size = journal_->size();
  if (!journal_size) return journal_size.status();
  if (*journal_size > plan_->summary.committed_end)
    H5J_RETURN_IF_ERROR(journal_->truncate(plan_->summary.committed_end));
  raw_ = std::move(plan_->raw);
  overlay_ = std::move(plan_->overlay);
  committed_size_ = logical_size_ = plan_->logical_size;
  H5J_RETURN_IF_ERROR(write_image_to_base(raw_));
  raw_.clear();
  overlay_.clear();
  if (opts_.after_replay) H5J_RETURN_IF_ERROR(opts_.after_replay(*this));
  if (opts_.ring.durable) return base_->sync_data();
  return Status::ok();
}

Status JournaledFile::start_generation(uint64_t generation, uint64_t first_txn, std::array<uint8_t, 16> uuid) {
  JournalHeader h;
  h.generation = generation;
  uint32_t old_salt = writer_ ? writer_->header().salt : (plan_ ? plan_->summary.header.salt : 0);
  do random_bytes(&h.salt, sizeof h.salt);
  while (h.salt == old_salt);
  h.uuid = uuid;
  h.first_txn = first_txn;
  h.created_ns = now_ns();
  h.base_size = committed_size_;
  h.target_name = target_name();
  journal_high_water_ = 0;
  session_noted_ = false;  // each generation names its writer
  if (writer_) {
    H5J_RETURN_IF_ERROR(writer_->reset(h));
    return data_writer_ ? data_writer_->reset(h) : Status::ok();
  }
  // Reusing a journal that held records: the new header must be durable
  // before any record of the new generation.  A fresh journal's header
  // becomes durable with its first commit.
  bool reused = report_.journal_found;
  auto w = JournalWriter::start(*journal_, h, opts_.ring, reused && opts_.ring.durable);
  if (!w) return w.status();
  writer_ = std::move(*w);
  // Under MPI every rank keeps a data log, numbered by rank, rank 0's too:
  // the numbers must have no gaps (data_log_records, h5recover).
  bool data_log = opts_.raw_mode != RawMode::kInPlace || opts_.role == Role::kMpiOwner;
  return data_log ? start_data_log(h, !reused) : Status::ok();
}

// The data log shares the journal's generation and salt, so its records of
// an older generation never validate as this one's.  A data log left beside
// a journal that is new holds nothing anyone needs (its journal was removed
// at a clean close): it is emptied.
Status JournaledFile::start_data_log(const JournalHeader& h, bool fresh) {
  uint32_t own = opts_.data_log;
  if (data_logs_.size() <= own) data_logs_.resize(size_t(own) + 1);
  if (!data_logs_[own]) {
    auto log = opts_.fs->open(data_log_path_for(opts_.journal_path, own), OpenMode::kCreate, opts_.engine);
    if (!log) return log.status();
    data_logs_[own] = std::move(*log);
  }
  if (fresh) H5J_RETURN_IF_ERROR(data_logs_[own]->truncate(0));
  auto w = JournalWriter::start(*data_logs_[own], h, opts_.ring, false);
  if (!w) return w.status();
  data_writer_ = std::move(*w);
  return Status::ok();
}

// --- reading and writing -----------------------------------------------------

Status JournaledFile::read_journal(uint64_t offset, std::span<std::byte> out) {
  if (writer_) return writer_->read(offset, out);
  return read_exact(*journal_, offset, out);
}

Status JournaledFile::read_data_log(uint32_t log, uint64_t offset, std::span<std::byte> out) {
  if (data_writer_ && log == opts_.data_log) return data_writer_->read(offset, out);
  auto file = data_log_file(log);
  if (!file) return file.status();
  if (*file == nullptr)
    return Status(Code::kMissing, "data log " + data_log_path_for(opts_.journal_path, log) + " is missing");
  return read_exact(**file, offset, out);
}

Status JournaledFile::read(uint64_t addr, std::span<std::byte> out) {
  if (!failed_.is_ok()) return failed_;
  // Without the journal a read could miss committed bytes: refuse rather than
  // serve a wrong view.  (HDF5 never reads through its tentative handle.)
  if (report_.passive) return busy_error();
  Status status = follower() ? catch_up() : Status::ok();
  if (!status) return fail(status);
  // Under MPI no rank knows the size the others' writes reached: HDF5
  // reads below its EOA, and the file's own end zero-fills the rest.
  uint64_t limit = opts_.role != Role::kSerial ? UINT64_MAX : logical_size_;
  uint64_t visible = addr >= limit ? 0 : std::min<uint64_t>(out.size(), limit - addr);
  overlay_.for_each_piece(addr, visible, [&](uint64_t a, uint64_t n, std::optional<uint64_t> src) {
    if (!status) return;
    auto dst = out.subspan(a - addr, n);
    if (src == ExtentMap::kZeroSource) {
      std::fill(dst.begin(), dst.end(), std::byte(0));
      return;
    }
    if (src) {
      status = read_journal(*src, dst);
      return;
    }
    // Below the overlay: the file, then staged bytes, then the data log's
    // extents over them (the order of JournaledFile::staged_'s invariant).
    auto got = base_->read_at(a, dst);
    if (!got) {
      status = got.status();
      return;
    }
    std::fill(dst.begin() + ptrdiff_t(*got), dst.end(), std::byte(0));  // past the physical end
    status = staged_.lay_onto(a, dst, DataLogSource(staged_bytes_));
    if (status)
      status = raw_.lay_onto(
          a, dst, [this](uint32_t log, uint64_t off, std::span<std::byte> o) { return read_data_log(log, off, o); });
  });
  // A failed read poisons the file too: HDF5 may carry on with a metadata
  // cache that missed what it could not read, and must not commit that.
  if (status && !peer_raw_.empty())
    status = peer_raw_.lay_onto(addr, out.first(visible), [this](uint32_t log, uint64_t off, std::span<std::byte> o) {
      return read_data_log(log, off, o);
    });
  if (!status) return read_only_ ? status : fail(status);
  std::fill(out.begin() + ptrdiff_t(visible), out.end(), std::byte(0));  // past the logical end
  for (const auto& [paddr, bytes] : memory_patches_) {
    uint64_t lo = std::max(paddr, addr), hi = std::min(paddr + bytes.size(), addr + out.size());
    if (lo < hi) std::memcpy(out.data() + (lo - addr), bytes.data() + (lo - paddr), hi - lo);
  }
  return Status::ok();
}

namespace {
constexpr size_t kEarlyWritebackMin = 1 << 20;
}  // namespace

Status JournaledFile::write(uint64_t addr, std::span<const std::byte> data, uint32_t tag) {
  if (Status s = start_write(data.size()); !s || data.empty()) return s;
  // Metadata is rank 0's to write (PROCESS_0_ONLY, which the driver sets),
  // and no HDF5 path reaches a follower with one since the driver lost its
  // lock callback (which made HDF5 write the superblock on every rank; a
  // follower's copy, taken at its commit, landed after rank 0's newer one:
  // t_pflush2 at 4 ranks).  One that did would be rank 0's bytes again.
  if (follower()) return Status::ok();
  H5J_RETURN_IF_ERROR(write_by_rule(addr, data, tag, opts_.inplace_min_bytes));
  return publish();
}

Status JournaledFile::write_by_rule(uint64_t addr, std::span<const std::byte> data, uint32_t tag, uint64_t inplace_min) {
  uint64_t floor = protected_end();
  // The part below the protected end is journaled; the rest goes in place,
  // if it is long enough to be worth an fdatasync of its own.
  size_t journaled = addr >= floor ? 0 : size_t(std::min<uint64_t>(data.size(), floor - addr));
  if (data.size() - journaled < inplace_min) journaled = data.size();
  // Over staged bytes, in place would be overwritten by them at the commit.
  if (staged_.touches(addr + journaled, addr + data.size())) journaled = data.size();
  if (journaled > 0) H5J_RETURN_IF_ERROR(journal_bytes(addr, data.subspan(0, journaled), tag));
  if (journaled < data.size()) {
    auto rest = data.subspan(journaled);
    if (Status s = base_->write_at(addr + journaled, rest); !s) return fail(s);
    // Large writes start on their way to the disk now, while HDF5 produces
    // the next ones, instead of all at the commit's fdatasync.  Not smaller
    // ones: HDF5 rewrites those (its sieve buffer), and a page under
    // writeback makes the next write to it wait (W2 ran at half speed).
    if (opts_.ring.durable && rest.size() >= kEarlyWritebackMin) base_->start_writeback(addr + journaled, rest.size());
    inplace_unsynced_ = true;
  }
  logical_size_ = std::max<uint64_t>(logical_size_, addr + data.size());
  dirty_ = true;
  return Status::ok();
}

Status JournaledFile::start_write(size_t bytes) {
  if (!failed_.is_ok()) return failed_;
  if (read_only_) return Status(Code::kInvalid, base_->path() + " is open read-only");
  if (report_.passive) return busy_error();
  // Nothing to write: no transaction.  A follower's writes are in the
  // owner's transaction, which only the owner opens.
  return bytes == 0 || follower() ? Status::ok() : begin_transaction();
}

Status JournaledFile::journal_bytes(uint64_t addr, std::span<const std::byte> data, uint32_t tag) {
  auto off = writer_->append_write(addr, tag, data);
  if (!off) return fail(off.status());
  overlay_.insert(addr, data.size(), *off);
  journal_high_water_ = std::max(journal_high_water_, addr + data.size());
  return Status::ok();
}

namespace {

uint64_t total_bytes(std::span<const RawPiece> pieces) {
  uint64_t n = 0;
  for (const RawPiece& p : pieces) n += p.bytes.size();
  return n;
}

bool sorted_and_disjoint(std::span<const RawPiece> pieces) {
  for (size_t i = 1; i < pieces.size(); ++i)
    if (pieces[i].addr < pieces[i - 1].addr + pieces[i - 1].bytes.size()) return false;
  return true;
}

// Windows: what HDF5's sieve buffer does for a driver without vector
// writes.  A window is read, patched and written whole, so it only spans
// gaps of up to kWindowGap, and at most kWindowMax bytes.
constexpr uint64_t kWindowGap = 64 << 10;
constexpr uint64_t kWindowMax = 1 << 20;
// The data log takes a pattern's bytes as one record; longer pieces are cut.
constexpr uint64_t kMaxExtentBytes = 64 << 20;
// Staged bytes are placed once there are this many (and at every commit).
constexpr uint64_t kStagedMax = 16 << 20;

}  // namespace

Status JournaledFile::write_raw(std::span<const RawPiece> pieces, uint32_t tag) {
  uint64_t total = total_bytes(pieces);
  if (Status s = start_write(total); !s || total == 0) return s;
  if (follower()) {
    if (Status s = catch_up(); !s) return fail(s);
  }
  H5J_RETURN_IF_ERROR(write_raw_by_mode(pieces, tag));
  return publish();
}

Status JournaledFile::write_raw_by_mode(std::span<const RawPiece> pieces, uint32_t tag) {
  if (opts_.raw_mode == RawMode::kLog) return append_raw(pieces);
  if (opts_.role != Role::kSerial && pieces.size() == 1) return write_piece_under_mpi(pieces[0], tag);
  // Serially, kInPlace gathers windows, unless every piece is in new space:
  // then staging (stages()) coalesces them at placing, with no read of the
  // gaps.  Under MPI a window's gaps may hold other ranks' bytes, which
  // writing the window back would overwrite with stale ones (why HDF5
  // turns its sieve buffer off in parallel), so every rank does what kAuto
  // does, and stages its small pieces in new space.
  if (opts_.raw_mode == RawMode::kInPlace && opts_.role == Role::kSerial &&
      (pieces.size() == 1 || !all_in_new_space(pieces)))
    return write_windows(pieces, tag);
  // kAuto: large pieces in new space in place, runs of the others to the log.
  uint64_t min = std::max<uint64_t>(opts_.inplace_min_bytes, 1);
  return log_all_but(
      pieces,
      [&](const RawPiece& p) {
        return p.addr >= protected_end() && p.bytes.size() >= min && !staged_.touches(p.addr, p.addr + p.bytes.size());
      },
      [&](const RawPiece& p) { return write_by_rule(p.addr, p.bytes, tag, opts_.inplace_min_bytes); });
}

// A write of one piece lands at once, never staged: HDF5 has rank 0 write
// a dataset's fill values alone, then an MPI_Barrier the driver cannot see,
// then every rank its data; a staged fill could land after that data.
// Rank 0 journals it if small; a follower writes it in place if it can.
Status JournaledFile::write_piece_under_mpi(const RawPiece& p, uint32_t tag) {
  if (!follower()) return write_by_rule(p.addr, p.bytes, tag, opts_.inplace_min_bytes);
  uint64_t end = p.addr + p.bytes.size();
  if (p.addr >= protected_end() && !staged_.touches(p.addr, end)) return write_by_rule(p.addr, p.bytes, tag, 0);
  return append_raw(std::span(&p, 1));
}

Status JournaledFile::log_all_but(std::span<const RawPiece> pieces, const std::function<bool(const RawPiece&)>& in_place,
                                  const std::function<Status(const RawPiece&)>& write_in_place) {
  size_t from = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (!in_place(pieces[i])) continue;
    H5J_RETURN_IF_ERROR(append_raw(pieces.subspan(from, i - from)));
    H5J_RETURN_IF_ERROR(write_in_place(pieces[i]));
    from = i + 1;
  }
  return append_raw(pieces.subspan(from));
}

// The vector's pieces are in place (above the protected end) if the vector
// as a whole is worth its own fdatasync: many small pieces of one large
// write must not each count as small.
Status JournaledFile::write_windows(std::span<const RawPiece> pieces, uint32_t tag) {
  assert(opts_.role == Role::kSerial);  // a window's gaps are this process's alone
  uint64_t inplace_min = total_bytes(pieces) >= opts_.inplace_min_bytes ? 0 : opts_.inplace_min_bytes;
  if (!sorted_and_disjoint(pieces)) {
    for (const RawPiece& p : pieces) H5J_RETURN_IF_ERROR(write_by_rule(p.addr, p.bytes, tag, inplace_min));
    return Status::ok();
  }
  std::vector<std::byte> window;
  for (size_t i = 0; i < pieces.size();) {
    size_t j = i + 1;
    uint64_t start = pieces[i].addr, end = start + pieces[i].bytes.size();
    while (j < pieces.size() && pieces[j].addr - end <= kWindowGap &&
           pieces[j].addr + pieces[j].bytes.size() - start <= kWindowMax) {
      end = pieces[j].addr + pieces[j].bytes.size();
      ++j;
    }
    if (j == i + 1) {
      H5J_RETURN_IF_ERROR(write_by_rule(start, pieces[i].bytes, tag, inplace_min));
    } else {
      window.resize(end - start);
      H5J_RETURN_IF_ERROR(read(start, window));
      for (size_t k = i; k < j; ++k)
        std::memcpy(window.data() + (pieces[k].addr - start), pieces[k].bytes.data(), pieces[k].bytes.size());
      H5J_RETURN_IF_ERROR(write_by_rule(start, window, tag, inplace_min));
    }
    i = j;
  }
  return Status::ok();
}

// Raw data in the data log: the bytes there, their index (DATA records,
// one per pattern, with their CRC) in the journal's open transaction, and
// the raw layer pointing at them.  Like a journaled write it raises the
// journal high water: replay must never lay these bytes over a newer
// in-place write.
Status JournaledFile::append_raw(std::span<const RawPiece> pieces) {
  PatternBuilder builder;
  std::vector<std::span<const std::byte>> gathered;
  uint64_t gathered_bytes = 0;
  auto emit = [&]() -> Status {
    size_t used = 0;
    for (const RawPattern& p : builder.take()) {
      // Each pattern takes the next p.bytes() gathered bytes.
      std::vector<std::span<const std::byte>> mine;
      for (uint64_t need = p.bytes(); need > 0;) {
        auto& piece = gathered[used];  // may be split across two patterns
        size_t n = size_t(std::min<uint64_t>(piece.size(), need));
        mine.push_back(piece.subspan(0, n));
        piece = piece.subspan(n);
        need -= n;
        if (piece.empty()) ++used;
      }
      H5J_RETURN_IF_ERROR(append_pattern(p, mine));
    }
    gathered.clear();
    gathered_bytes = 0;
    return Status::ok();
  };
  for (const RawPiece& piece : pieces) {
    for (uint64_t done = 0; done < piece.bytes.size();) {
      auto chunk = piece.bytes.subspan(done, std::min<uint64_t>(piece.bytes.size() - done, kMaxExtentBytes));
      uint64_t addr = piece.addr + done;
      if (gathered_bytes + chunk.size() > kMaxExtentBytes || !builder.add(addr, chunk.size())) {
        H5J_RETURN_IF_ERROR(emit());
        builder.add(addr, chunk.size());
      }
      gathered.push_back(chunk);
      gathered_bytes += chunk.size();
      done += chunk.size();
    }
  }
  return emit();
}

Status JournaledFile::append_pattern(const RawPattern& pattern, Gather bytes) {
  logical_size_ = std::max<uint64_t>(logical_size_, pattern.end());
  dirty_ = true;
  if (stages(pattern)) return stage(pattern, bytes);
  assert(data_writer_);
  auto index = data_writer_->append_extent(current_txn(), opts_.data_log, pattern, bytes);
  if (!index) return fail(index.status());
  if (follower()) pending_index_.push_back(*index);  // the owner journals it at the commit
  else if (Status s = writer_->append_data(*index); !s) return fail(s);
  add_to_image(raw_, overlay_, pattern, index->log, index->log_offset);
  data_unsynced_ = true;
  // Under MPI the other ranks read the record from the file (refresh_peers).
  if (opts_.role != Role::kSerial)
    if (Status s = data_writer_->publish(); !s) return fail(s);
  stats_.raw_bytes_logged += pattern.bytes();
  stats_.raw_index_peak_bytes = std::max<uint64_t>(stats_.raw_index_peak_bytes, raw_.memory_bytes());
  // Replay must never lay logged bytes over a newer in-place write.
  journal_high_water_ = std::max(journal_high_water_, pattern.end());
  return Status::ok();
}

// Under MPI a rank cannot gather its small pieces into windows (their gaps
// may be other ranks'), and writing each alone queues the ranks on the
// file's inode lock; serially a window costs a read of its gaps.  So small
// pieces in new space are staged in memory, and this rank writes them in
// place later, adjacent runs coalesced: a strided block fills the gaps of
// the ones before it.  The write-ahead rule allows it (new space holds
// nothing committed).  raw=log keeps every byte in the log, as asked, and
// serial raw=auto logs small pieces as it always has.  When they are
// placed, and what other ranks see before: design.md §10.
bool JournaledFile::stages(const RawPattern& pattern) const {
  bool mode = opts_.role == Role::kSerial ? opts_.raw_mode == RawMode::kInPlace : opts_.raw_mode != RawMode::kLog;
  return mode && pattern.addr >= protected_end();
}

bool JournaledFile::all_in_new_space(std::span<const RawPiece> pieces) const {
  return std::all_of(pieces.begin(), pieces.end(), [&](const RawPiece& p) { return p.addr >= protected_end(); });
}

Status JournaledFile::stage(const RawPattern& pattern, Gather bytes) {
  assert(!overlay_.intersects(pattern.addr, pattern.end()));  // the overlay ends below the protected end
  staged_.insert(pattern, 0, staged_bytes_.size());
  if (staged_bytes_.capacity() == 0) staged_bytes_.reserve(kStagedMax + pattern.bytes());  // no copies as it grows
  for (std::span<const std::byte> b : bytes) staged_bytes_.insert(staged_bytes_.end(), b.begin(), b.end());
  // Placed early, the staged bytes reach the disk while HDF5 produces the
  // next ones, instead of all at the commit's sync; by then runs have
  // coalesced into large writes.  It also bounds the memory staging takes.
  return staged_bytes_.size() >= kStagedMax ? write_staged(UINT64_MAX) : Status::ok();
}

Status JournaledFile::place_staged() {
  if (!failed_.is_ok()) return failed_;
  return write_staged(UINT64_MAX);
}

Status JournaledFile::write_staged(uint64_t limit) {
  if (staged_.empty()) return Status::ok();
  Status s = apply_raw_layer(staged_, limit, DataLogSource(staged_bytes_), *base_, nullptr, &apply_run_);
  if (!s) return fail(s);
  if (opts_.ring.durable && staged_bytes_.size() >= kEarlyWritebackMin) {
    uint64_t lo = UINT64_MAX, hi = 0;
    staged_.for_each_window([&](uint64_t addr, uint64_t len) {
      lo = std::min(lo, addr);
      hi = std::max(hi, addr + len);
    });
    base_->start_writeback(lo, std::min(hi, limit) - std::min(lo, limit));
  }
  staged_.clear();
  staged_bytes_.clear();  // keeps its capacity for the next
  inplace_unsynced_ = true;
  return Status::ok();
}

Status JournaledFile::begin_transaction() {
  if (writer_->in_transaction()) return Status::ok();
  if (Status s = writer_->begin(); !s) return fail(s);
  if (!session_noted_) {
    // Who wrote this journal, for anyone reading it after a crash.
    session_noted_ = true;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    std::string note = "h5journal session: pid " + std::to_string(getpid()) + " on " + host + ", engine " +
                       journal_->engine_name();
    if (Status s = writer_->comment(note); !s) return fail(s);
  }
  return Status::ok();
}

Status JournaledFile::set_size(uint64_t size) {
  if (!failed_.is_ok()) return failed_;
  // Cut bytes must read as zeros if the file grows again: staged bytes
  // beyond the new end are dropped, the rest go in place now.  (Every rank
  // cuts to the same size in HDF5's collective truncate, and no rank writes
  // at or past it here, so this races with no rank's ftruncate.)
  if (size < logical_size_) H5J_RETURN_IF_ERROR(write_staged(size));
  if (follower()) {  // the owner sizes the file
    logical_size_ = size;
    return Status::ok();
  }
  if (read_only_ || !writer_ || size == logical_size_) return Status::ok();
  H5J_RETURN_IF_ERROR(resize(size));
  return publish();
}

Status JournaledFile::resize(uint64_t size) {
  uint64_t old_size = logical_size_;
  logical_size_ = size;
  dirty_ = true;
  if (size > old_size) return Status::ok();
  // Shrinking: the cut bytes must read as zeros if the file grows again, as
  // after ftruncate.  Below the protected end the file still holds bytes the
  // committed state needs, so the zeroing is journaled (a ZERO record);
  // above it, the file is cut for real.
  uint64_t floor = protected_end();
  if (size < floor) {
    uint64_t zero_end = std::min(old_size, floor);
    if (size < zero_end) {
      if (Status s = begin_transaction(); !s) return s;
      if (Status s = writer_->append_zero(size, zero_end - size); !s) return fail(s);
      overlay_.insert(size, zero_end - size, ExtentMap::kZeroSource);
      journal_high_water_ = std::max(journal_high_water_, zero_end);
    }
  }
  auto physical = base_->size();
  if (!physical) return fail(physical.status());
  uint64_t cut = std::max(size, protected_end());
  if (*physical > cut) {
    if (Status s = base_->truncate(cut); !s) return fail(s);
  }
  return Status::ok();
}

std::string JournaledFile::target_name() const {
  return opts_.target_name.empty() ? journal_target_name(base_->path()) : opts_.target_name;
}

Status JournaledFile::busy_error(std::optional<int> holder) const {
  std::string who = holder ? "process " + std::to_string(*holder) : "another handle or process";
  return Status(Code::kBusy,
                base_->path() + " is open for writing through h5journal by " + who + " (" + opts_.journal_path +
                    " is locked)",
                EWOULDBLOCK);
}

// --- commit, checkpoint, close -----------------------------------------------

Status JournaledFile::fail(Status s) {
  // Any failed read, write or sync poisons the file: HDF5 has moved on in
  // memory, so committing later could commit a state missing this write, or
  // built on what it could not read.
  if (failed_.is_ok())
    failed_ = Status(s.code() == Code::kNoSpace ? Code::kNoSpace : Code::kFailStopped,
                     s.message() + "; " + base_->path() + " stays at its last commit", s.sys_errno());
  return failed_;
}

Status JournaledFile::commit() {
  if (follower()) return Status(Code::kInvalid, "an MPI follower commits through the owner (prepare_commit)");
  H5J_RETURN_IF_ERROR(commit_transaction());
  return checkpoint_due() ? checkpoint() : Status::ok();
}

// Every log counts: a checkpoint also bounds the data logs (the followers'
// too) and the raw index, whose memory grows with the DATA records in the
// journal.
bool JournaledFile::checkpoint_due() const {
  if (!writer_) return false;
  uint64_t logged = writer_->generation_bytes() + data_log_bytes() + followers_log_bytes_;
  return logged >= opts_.checkpoint_bytes;
}

uint64_t JournaledFile::data_log_bytes() const { return data_writer_ ? data_writer_->generation_bytes() : 0; }

Status JournaledFile::commit_transaction() {
  if (!failed_.is_ok()) return failed_;
  if (!writer_ || !dirty_) return Status::ok();
  if (Status s = begin_transaction(); !s) return s;
  bool durable = opts_.ring.durable;
  // The first commit makes the journal's directory entry durable, and only
  // then sets the file's binding attribute (made durable by the fsync
  // below): a crash never leaves a binding naming a journal whose name might
  // not have reached the disk.
  if (!first_commit_done_) {
    if (durable) {
      if (Status s = opts_.fs->sync_dir(opts_.journal_path); !s) return fail(s);
    }
    if (!binding_set_) {
      if (Status s = set_binding(); !s) return fail(s);
    }
  }
  H5J_RETURN_IF_ERROR(make_writes_durable(!first_commit_done_));
  if (Status s = writer_->commit(logical_size_); !s) return fail(s);
  first_commit_done_ = true;
  committed_size_ = logical_size_;
  dirty_ = false;
  ++stats_.commits;
  return Status::ok();
}

// In-place bytes must be durable before the COMMIT that covers them can be;
// likewise the data log before the COMMIT whose DATA records index it.  The
// first commit syncs the file whole (the binding attribute with it).
Status JournaledFile::make_writes_durable(bool first_commit) {
  H5J_RETURN_IF_ERROR(write_staged(UINT64_MAX));
  if (opts_.ring.durable && (inplace_unsynced_ || first_commit)) {
    Status s = first_commit ? base_->sync_all() : base_->sync_data();
    if (!s) return fail(s);
  }
  inplace_unsynced_ = false;
  if (data_unsynced_) {
    if (Status s = data_writer_->sync(); !s) return fail(s);
    data_unsynced_ = false;
  }
  return Status::ok();
}

Status JournaledFile::write_image_to_base(const RawLayer& raw) {
  return apply_image(
      raw, overlay_, committed_size_, [this](uint64_t off, std::span<std::byte> out) { return read_journal(off, out); },
      [this](uint32_t log, uint64_t off, std::span<std::byte> out) { return read_data_log(log, off, out); }, *base_,
      opts_.progress, &apply_run_);
}

Status JournaledFile::checkpoint() {
  assert(!writer_->in_transaction() && !dirty_ && staged_.empty());
  if (Status s = write_image_to_base(raw_); !s) return fail(s);
  if (opts_.ring.durable) {
    if (Status s = base_->sync_data(); !s) return fail(s);
  }
  return end_checkpoint();
}

// The image is durable in the file: a new generation, whose journal and
// data logs start empty.
Status JournaledFile::end_checkpoint() {
  raw_.clear();
  overlay_.clear();
  ++stats_.checkpoints;
  const JournalHeader& h = writer_->header();
  if (Status s = start_generation(h.generation + 1, writer_->next_txn(), h.uuid); !s) return fail(s);
  if (Status s = set_binding(); !s) return fail(s);
  followers_log_bytes_ = 0;  // their logs are emptied as they follow
  return Status::ok();
}

Status JournaledFile::patch(uint64_t addr, std::span<const std::byte> bytes) {
  if (read_only_) {
    memory_patches_.emplace_back(addr, std::vector<std::byte>(bytes.begin(), bytes.end()));
    return Status::ok();
  }
  return base_->write_at(addr, bytes);
}

// The file's first 8 bytes go into the journal, in a last committed
// transaction, and only then is the guard written over them in the file:
// a crash in between leaves the journal holding what the file still holds.
// The journal and data log stay, bound to the file as after a crash.
Status JournaledFile::close_in_log_form() {
  H5J_RETURN_IF_ERROR(commit());
  if (logical_size_ >= sizeof kLogFormGuard) {
    std::array<std::byte, sizeof kLogFormGuard> head;
    H5J_RETURN_IF_ERROR(read(0, head));
    H5J_RETURN_IF_ERROR(begin_transaction());
    H5J_RETURN_IF_ERROR(journal_bytes(0, head, 0));
    dirty_ = true;
    // No checkpoint here: it would start a generation without these bytes.
    H5J_RETURN_IF_ERROR(commit_transaction());
    auto guard = std::as_bytes(std::span(kLogFormGuard));
    if (Status s = base_->write_at(0, guard); !s) return fail(s);
    if (opts_.ring.durable) {
      if (Status s = base_->sync_data(); !s) return fail(s);
    }
  }
  writer_.reset();
  data_writer_.reset();
  return Status::ok();
}

Status JournaledFile::close() {
  if (closed_) return Status::ok();
  closed_ = true;
  if (follower()) {  // the owner commits, materializes and removes every log
    data_writer_.reset();
    return failed_;
  }
  if (!failed_.is_ok()) return failed_;  // the journal keeps the last commit
  if (!writer_) return Status::ok();     // read-only or passive: nothing to do
  if (!opts_.materialize_at_close) return close_in_log_form();
  H5J_RETURN_IF_ERROR(commit());
  if (first_commit_done_) {
    if (Status s = write_image_to_base(raw_); !s) return fail(s);
  }
  return end_close();
}

// The image is in the file (not yet durable).
Status JournaledFile::end_close() {
  closed_ = true;
  // A session that never bound the file (it committed nothing and found no
  // journal) leaves nothing a crash could misread: just drop the journal.
  // Otherwise the order matters: file contents and the binding's removal
  // durable first, then the journal's removal.  A journal without a binding
  // is replayed harmlessly (idempotent); a binding without a journal would be
  // reported as a missing journal.
  bool bound = binding_set_ || report_.journal_found;
  bool durable = opts_.ring.durable;
  if (bound) {
    if (Status s = base_->remove_xattr(kBindingXattr); !s) return fail(s);
  }
  if (durable && (bound || first_commit_done_)) {
    if (Status s = base_->sync_all(); !s) return fail(s);
  }
  writer_.reset();
  journal_.reset();
  data_writer_.reset();
  data_logs_.clear();
  H5J_RETURN_IF_ERROR(opts_.fs->remove(opts_.journal_path));
  if (durable && bound) H5J_RETURN_IF_ERROR(opts_.fs->sync_dir(opts_.journal_path));
  // The data logs only once the journal's removal is durable: a journal
  // whose data log is gone cannot be replayed (the crash-state explorer
  // found this order).  A data log left alone is emptied by the next
  // session that journals this file, and removed at its close.  Under MPI
  // the owner removes every rank's, after the last commit that needed them.
  return remove_data_logs(*opts_.fs, opts_.journal_path, durable);
}

Result<std::vector<uint32_t>> existing_data_logs(FileSystem& fs, const std::string& journal_path) {
  std::string base = data_log_path_for(journal_path);
  auto paths = fs.paths_with_prefix(base);
  if (!paths) return paths.status();
  std::vector<uint32_t> logs;
  for (const std::string& path : *paths) {
    std::string_view rest = std::string_view(path).substr(base.size());
    if (rest.empty()) {
      logs.push_back(0);
      continue;
    }
    // ".<n>" with n >= 1, as data_log_path_for spells it; any other name is not a data log.
    if (rest.size() < 2 || rest[0] != '.' || rest[1] == '0') continue;
    uint32_t n = 0;
    auto [end, err] = std::from_chars(rest.data() + 1, rest.data() + rest.size(), n);
    if (err == std::errc() && end == rest.data() + rest.size()) logs.push_back(n);
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

Status remove_data_logs(FileSystem& fs, const std::string& journal_path, bool sync) {
  auto logs = existing_data_logs(fs, journal_path);
  if (!logs) return logs.status();
  for (uint32_t n : *logs) H5J_RETURN_IF_ERROR(fs.remove(data_log_path_for(journal_path, n)));
  return sync && !logs->empty() ? fs.sync_dir(journal_path) : Status::ok();
}

// --- MPI: the owner and its followers (docs/design.md §10) -------------------

Status JournaledFile::publish() {
  if (opts_.role != Role::kMpiOwner || !writer_) return Status::ok();
  if (Status s = writer_->publish(); !s) return fail(s);
  return Status::ok();
}

uint64_t JournaledFile::current_txn() const { return follower() ? followed_txn_ : writer_->open_txn(); }

// The owner opened (and recovered) the file before any follower opens it,
// so the journal and its header are there.  A follower takes no lock: the
// owner holds the journal's.
Status JournaledFile::open_as_follower() {
  auto journal = opts_.fs->open(opts_.journal_path, OpenMode::kReadOnly, IoEngine::kSync);
  if (!journal) return journal.status();
  journal_ = std::move(*journal);
  return follow_generation();
}

Status JournaledFile::follow_generation() {
  auto reader = JournalReader::open(*journal_);
  if (!reader) return reader.status();
  tail_ = std::move(*reader);
  const JournalHeader& h = tail_->header();
  assert(staged_.empty());  // written in place at the commit before this generation
  raw_.clear();
  overlay_.clear();
  pending_index_.clear();
  journal_high_water_ = 0;
  committed_size_ = std::max(committed_size_, h.base_size);
  followed_txn_ = h.first_txn;
  forget_peers();
  data_writer_.reset();  // its writes done before the log is emptied
  H5J_RETURN_IF_ERROR(start_data_log(h, /*fresh=*/true));
  return catch_up();
}

// Records of the owner's open transaction count too: HDF5 reads metadata
// that rank 0 wrote right after a sync point, before any commit.  A record
// not yet whole (the owner is writing it) ends the pass; the next starts
// there again.
Status JournaledFile::catch_up() {
  H5J_RETURN_IF_ERROR(tail_->refresh());
  for (;;) {
    auto rec = tail_->next();
    if (!rec) return rec.status();
    if (!rec->has_value()) return Status::ok();
    apply_followed(**rec);
  }
}

void JournaledFile::apply_followed(const Record& r) {
  switch (r.header.type) {
    case RecordType::kBegin: followed_txn_ = r.header.txn; return;
    case RecordType::kCommit:
      committed_size_ = r.commit.logical_size;
      followed_txn_ = r.header.txn + 1;
      return;
    case RecordType::kComment: return;
    case RecordType::kWrite: overlay_.insert(r.write.address, r.write.length, r.data_offset); break;
    case RecordType::kZero: overlay_.insert(r.write.address, r.write.length, ExtentMap::kZeroSource); break;
    case RecordType::kData:
      // This rank's own were in its image from the moment it wrote them.
      if (r.data_log != opts_.data_log) add_to_image(raw_, overlay_, r.pattern, r.data_log, r.data_offset);
      break;
  }
  journal_high_water_ = std::max(journal_high_water_, r.write.address + r.write.length);
}

Result<std::vector<DataPayload>> JournaledFile::prepare_commit() {
  if (!failed_.is_ok()) return failed_;
  H5J_RETURN_IF_ERROR(make_writes_durable(false));
  return std::exchange(pending_index_, {});
}

Result<bool> JournaledFile::commit_with(std::span<const DataPayload> followers, uint64_t followers_log_bytes,
                                        bool closing) {
  if (!failed_.is_ok()) return failed_;
  if (!followers.empty() && writer_) {
    H5J_RETURN_IF_ERROR(begin_transaction());
    for (const DataPayload& d : followers) {
      if (Status s = writer_->append_data(d); !s) return fail(s);
      add_to_image(raw_, overlay_, d.pattern, d.log, d.log_offset);
      journal_high_water_ = std::max(journal_high_water_, d.pattern.end());
    }
    dirty_ = true;
  }
  followers_log_bytes_ = followers_log_bytes;
  H5J_RETURN_IF_ERROR(commit_transaction());
  peer_raw_.clear();  // the followers' extents are in raw_ now
  if (closing) return writer_ && opts_.materialize_at_close && first_commit_done_;
  return checkpoint_due();
}

// Windows are split by the data logs that touch them, which every rank
// knows alike once it has followed the journal to the commit: those of one
// rank's log alone are that rank's; the rest (several logs) are rank 0's.
// No rank reads another's data log but rank 0.  The overlay, which may lie
// over any window, is rank 0's, laid after every rank's share (end_commit).
Status JournaledFile::write_raw_share() {
  if (!failed_.is_ok()) return failed_;
  uint32_t me = opts_.data_log;
  auto mine = [&](uint64_t window) {
    uint32_t log = raw_.sole_log(window);
    return log == me || (me == 0 && log >= opts_.ranks);
  };
  Status s = apply_raw_layer(
      raw_, committed_size_,
      [this](uint32_t log, uint64_t off, std::span<std::byte> out) { return read_data_log(log, off, out); }, *base_,
      mine, &apply_run_);
  if (s && opts_.ring.durable) s = base_->sync_data();
  return s ? s : fail(s);
}

Status JournaledFile::end_commit(bool materialize, bool closing) {
  if (!failed_.is_ok()) return failed_;
  if (materialize) {
    const RawLayer written;  // every rank's share is in the file
    if (Status s = write_image_to_base(written); !s) return fail(s);
    if (opts_.ring.durable && !closing) {  // end_close syncs it with the binding's removal
      if (Status s = base_->sync_data(); !s) return fail(s);
    }
    return closing ? end_close() : end_checkpoint();
  }
  return closing ? close() : Status::ok();
}

Status JournaledFile::finish_commit() {
  if (!failed_.is_ok()) return failed_;
  auto reader = JournalReader::open(*journal_);
  if (!reader) return fail(reader.status());
  bool new_generation = (*reader)->header().generation != tail_->header().generation;
  Status s = new_generation ? follow_generation() : catch_up();
  peer_raw_.clear();
  return s ? s : fail(s);
}

Status JournaledFile::refresh_peers() {
  if (!failed_.is_ok()) return failed_;
  if (opts_.role == Role::kSerial || read_only_ || closed_) return Status::ok();
  if (peer_generation_ != generation()) forget_peers();
  for (uint32_t log = 0; log < opts_.ranks; ++log) {
    if (log == opts_.data_log) continue;
    if (Status s = follow_peer(log); !s) return fail(s);
  }
  return Status::ok();
}

Status JournaledFile::follow_peer(uint32_t log) {
  if (peer_logs_.size() <= log) peer_logs_.resize(size_t(log) + 1);
  std::unique_ptr<JournalReader>& reader = peer_logs_[log];
  if (!reader) {
    auto file = data_log_file(log);
    if (!file) return file.status();
    if (*file == nullptr) return Status::ok();  // that rank has not opened yet
    auto opened = JournalReader::open(**file);
    // No header yet, or last generation's: the rank has not written in this one.
    if (!opened || (*opened)->header().generation != generation()) return Status::ok();
    reader = std::move(*opened);
  }
  H5J_RETURN_IF_ERROR(reader->refresh());
  for (;;) {
    auto rec = reader->next();
    if (!rec) return rec.status();
    if (!rec->has_value()) return Status::ok();  // the end so far, or a record the rank is still writing
    const Record& r = **rec;
    if (r.header.type == RecordType::kData && r.header.txn >= current_txn()) peer_raw_.insert(r.pattern, log, r.data_offset);
  }
}

void JournaledFile::forget_peers() {
  peer_logs_.clear();
  peer_raw_.clear();
  peer_generation_ = writer_ || tail_ ? generation() : 0;
}

Status commit_in_one_process(std::span<JournaledFile* const> ranks, bool closing) {
  JournaledFile& owner = *ranks[0];
  auto followers = ranks.subspan(1);
  auto on_followers = [&](const std::function<Status(JournaledFile&)>& step) {
    Status first;
    for (JournaledFile* f : followers)
      if (Status s = step(*f); first && !s) first = s;
    return first;
  };
  // 1.
  Status prepared;
  std::vector<DataPayload> records;
  uint64_t log_bytes = 0;
  for (JournaledFile* f : followers) {
    auto index = f->prepare_commit();
    if (!index && prepared) prepared = index.status();
    if (index) records.insert(records.end(), index->begin(), index->end());
    log_bytes += f->data_log_bytes();
  }
  // 2.
  bool materialize = false;
  Status outcome = prepared;
  if (!prepared) {
    (void)owner.fail_stop(prepared);
    if (closing) (void)owner.close();
  } else {
    auto due = owner.commit_with(records, log_bytes, closing);
    if (due) materialize = *due;
    else outcome = due.status();
  }
  if (!outcome) {
    if (closing) (void)on_followers([](JournaledFile& f) { return f.close(); });
    return outcome;
  }
  // 3. and 4.
  if (materialize) {
    Status shared = on_followers([](JournaledFile& f) { return f.finish_commit(); });
    if (shared) shared = on_followers([](JournaledFile& f) { return f.write_raw_share(); });
    if (Status s = owner.write_raw_share(); shared && !s) shared = s;
    if (!shared) {
      for (JournaledFile* f : ranks) (void)f->fail_stop(shared);
      return shared;
    }
  } else if (!closing) {
    return on_followers([](JournaledFile& f) { return f.finish_commit(); });
  }
  // 5.
  Status ended = owner.end_commit(materialize, closing);
  if (!ended) {
    for (JournaledFile* f : followers) (void)f->fail_stop(ended);
    return ended;
  }
  return on_followers([&](JournaledFile& f) { return closing ? f.close() : f.finish_commit(); });
}

}  // namespace h5j
