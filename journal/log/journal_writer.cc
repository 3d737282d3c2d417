#include "journal_writer.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <optional>

#include "coding.h"
#include "crc32c.h"

namespace h5j {

namespace {
// Zeros are written ahead of the records in pieces of kZeros, from
// kFirstZerosAhead past them at first to kMaxZerosAhead (reserve()).
constexpr uint64_t kFirstZerosAhead = uint64_t(256) << 10;
constexpr uint64_t kMaxZerosAhead = uint64_t(2) << 20;
constexpr uint64_t kZerosAlign = uint64_t(64) << 10;
constexpr std::byte kZeros[256 << 10] = {};
static_assert(kFirstZerosAhead % kZerosAlign == 0 && kMaxZerosAhead % kFirstZerosAhead == 0);
}  // namespace

JournalWriter::JournalWriter(File& file, const JournalHeader& header, RingOptions ring)
    : file_(file), header_(header), opts_(ring), zeros_ahead_(kFirstZerosAhead) {
  assert(ring.buffers >= 2 && ring.buffer_size >= kBlockSize);
  ring_.resize(ring.buffers);
  txn_ = header.first_txn - 1;
}

Result<std::unique_ptr<JournalWriter>> JournalWriter::start(File& file, const JournalHeader& header,
                                                            RingOptions ring, bool sync_header) {
  std::unique_ptr<JournalWriter> w(new JournalWriter(file, header, ring));
  w->cur().base = kFirstRecordOffset;
  auto size = file.size();
  if (!size) return size.status();
  // Zeros never go below the records: the header region is the slots'.
  w->allocated_end_ = std::max<uint64_t>(*size, kFirstRecordOffset);
  H5J_RETURN_IF_ERROR(w->write_header_slot(header, sync_header));
  return w;
}

Status JournalWriter::write_header_slot(const JournalHeader& h, bool sync) {
  alignas(8) std::byte slot[kHeaderSlotSize];
  encode_header(h, std::span<std::byte, kHeaderSlotSize>(slot));
  H5J_RETURN_IF_ERROR(file_.write_at(kHeaderSlotOffset[h.generation % 2], slot));
  return sync ? sync_all_written() : Status::ok();
}

// fdatasync also makes the journal's size and blocks durable, the zeros
// written ahead included.
Status JournalWriter::sync_all_written() {
  H5J_RETURN_IF_ERROR(file_.sync_after_writes());
  durable_end_ = allocated_end_;
  return Status::ok();
}

Status JournalWriter::begin() {
  assert(!in_txn_);
  ++txn_;
  in_txn_ = true;
  begin_pending_ = true;
  txn_records_ = 0;
  return Status::ok();
}

Status JournalWriter::place_begin() {
  if (!begin_pending_) return Status::ok();
  begin_pending_ = false;
  // Nothing was appended since the last COMMIT's rotate(): the buffer is empty.
  assert(cur().used == 0 && cur().submitted == 0);
  if (seals_ && seals_->next_record_on_fresh_block()) cur().base = align_up(cur().base, header_.block_size);
  begin_lsn_ = tell();
  std::byte payload[kBeginPayloadSize];
  encode_begin({now_ns()}, payload);
  H5J_RETURN_IF_ERROR(append_record(RecordType::kBegin, payload, {}));
  if (noted_ || note_.empty()) return Status::ok();
  noted_ = true;
  return comment(note_);
}

Result<uint64_t> JournalWriter::append_write(uint64_t address, uint32_t tag, std::span<const std::byte> data) {
  assert(in_txn_);
  H5J_RETURN_IF_ERROR(place_begin());
  std::byte head[kWritePayloadHeader];
  encode_write_payload_header({address, data.size(), tag}, head);
  uint64_t data_offset = tell() + kRecordHeaderSize + kWritePayloadHeader;
  H5J_RETURN_IF_ERROR(append_record(RecordType::kWrite, head, {&data, 1}));
  return data_offset;
}

Status JournalWriter::append_zero(uint64_t address, uint64_t length) {
  assert(in_txn_);
  std::byte payload[kZeroPayloadSize];
  encode_zero({address, length}, payload);
  return append_record(RecordType::kZero, payload, {});
}

Status JournalWriter::append_placed(uint64_t address, uint64_t length) {
  assert(in_txn_);
  std::byte payload[kZeroPayloadSize];
  encode_zero({address, length}, payload);
  return append_record(RecordType::kPlaced, payload, {});
}

Status JournalWriter::append_in_place(const InPlacePayload& p) {
  assert(in_txn_ && p.length > 0);
  std::byte payload[kInPlacePayloadSize];
  encode_in_place(p, payload);
  return append_record(RecordType::kInPlace, payload, {});
}

Status JournalWriter::append_data(const DataPayload& d) {
  assert(in_txn_);
  std::byte payload[kDataPayloadSize];
  encode_data(d, payload);
  return append_record(RecordType::kData, payload, {});
}

Result<DataPayload> JournalWriter::append_extent(uint64_t txn, uint32_t log, const RawPattern& pattern, Gather bytes) {
  assert(!in_txn_);
  txn_ = txn;  // the record carries the transaction that wrote it
  DataPayload d{pattern, tell() + kRecordHeaderSize + kDataPayloadSize, 0, log};
  if (d.log_offset + pattern.bytes() >= kMaxDataLogOffset) return Status(Code::kInvalid, "data log full (2^62 bytes)");
  uint32_t crc = 0;
  for (auto piece : bytes) crc = crc32c(piece.data(), piece.size(), crc);
  d.masked_crc = mask_crc(crc);
  std::byte head[kDataPayloadSize];
  encode_data(d, head);
  H5J_RETURN_IF_ERROR(append_record(RecordType::kData, head, bytes));
  return d;
}

Status JournalWriter::sync() {
  H5J_RETURN_IF_ERROR(publish());
  return opts_.durable ? sync_all_written() : Status::ok();
}

Status JournalWriter::publish() {
  H5J_RETURN_IF_ERROR(submit(cur()));
  return file_.wait_write(UINT64_MAX);
}

Status JournalWriter::comment(std::string_view text) {
  auto bytes = std::as_bytes(std::span(text.data(), std::min(text.size(), size_t(kMaxPayload))));
  return append_record(RecordType::kComment, {}, {&bytes, 1});
}

Status JournalWriter::commit(const CommitFacts& facts, CommitSync sync) {
  assert(in_txn_ && facts.durable_txn <= txn_);
  H5J_RETURN_IF_ERROR(place_begin());
  std::byte payload[kCommitPayloadSize];
  encode_commit({facts.logical_size, txn_records_, begin_lsn_, now_ns(), facts.file_size, facts.durable_txn}, payload);
  H5J_RETURN_IF_ERROR(append_record(RecordType::kCommit, payload, {}));
  in_txn_ = false;
  H5J_RETURN_IF_ERROR(submit(cur()));
  // The next record starts on a fresh block, so no later write shares a
  // sector with this commit (a torn later write cannot damage it), unless
  // the header says durable=false, or the commit is packed and its block
  // sealed later, if at all (CommitSeals; format.h, FILE LAYOUT).
  uint64_t end = tell();
  last_commit_sealed_ = !(seals_ && sync == CommitSync::kWritten) || seals_->end_commit_block();
  H5J_RETURN_IF_ERROR(rotate(last_commit_sealed_ ? align_up(end, header_.block_size) : end));
  if (!opts_.durable || sync == CommitSync::kWritten) return file_.wait_write(UINT64_MAX);
  if (sync == CommitSync::kFlush) return sync_all_written();
  assert(allocated_end_ == durable_end_ && end <= durable_end_);  // fits_in_durable_space held
  return file_.write_back();
}

Status JournalWriter::seal_last_commit() {
  if (last_commit_sealed_ || !records_follow_commit()) return Status::ok();
  uint64_t to = align_up(tell() + kRecordHeaderSize, header_.block_size);
  std::string fill(to - tell() - kRecordHeaderSize, ' ');
  H5J_RETURN_IF_ERROR(comment(fill));
  assert(tell() == to);
  last_commit_sealed_ = true;
  H5J_RETURN_IF_ERROR(publish());
  if (seals_) seals_->sealed_last_commit();
  return Status::ok();
}

Status JournalWriter::reset(const JournalHeader& next) {
  H5J_RETURN_IF_ERROR(write_next_header(next));
  if (opts_.durable) H5J_RETURN_IF_ERROR(sync_all_written());
  txn_ = next.first_txn - 1;
  last_commit_sealed_ = true;  // the generation's first record starts on a fresh block
  noted_ = false;
  window_.drop();  // the next generation writes over these offsets
  for (auto& b : ring_) b.base = b.used = b.submitted = b.ticket = 0;
  cur().base = kFirstRecordOffset;
  return Status::ok();
}

Status JournalWriter::retire(const JournalHeader& next) {
  H5J_RETURN_IF_ERROR(write_next_header(next));
  return file_.write_back();
}

Status JournalWriter::write_next_header(const JournalHeader& next) {
  assert(!in_txn_ && next.generation == header_.generation + 1);
  H5J_RETURN_IF_ERROR(file_.wait_write(UINT64_MAX));
  H5J_RETURN_IF_ERROR(write_header_slot(next, /*sync=*/false));
  header_ = next;
  return Status::ok();
}

Status JournalWriter::append_record(RecordType type, std::span<const std::byte> payload_head, Gather payload_body) {
  assert(!ring_given_back_);
  // Before the BEGIN is placed: a refused ring leaves it to the next record.
  if (!ring_mem_.valid()) H5J_RETURN_IF_ERROR(allocate_ring());
  if (type != RecordType::kBegin) H5J_RETURN_IF_ERROR(place_begin());
  uint64_t payload_len = payload_head.size();
  for (auto piece : payload_body) payload_len += piece.size();
  if (payload_len > kMaxPayload)
    return Status(Code::kInvalid, "journal record of " + std::to_string(payload_len) + " bytes exceeds the limit");
  RecordHeader h{0, type, uint32_t(payload_len), header_.salt, tell(), txn_};
  std::byte hdr[kRecordHeaderSize];
  encode_record_header(h, hdr);
  put_u32(hdr, record_crc(hdr, payload_head, payload_body));
  size_t pad = record_span(payload_len) - kRecordHeaderSize - payload_len;
  H5J_RETURN_IF_ERROR(append_bytes(hdr));
  H5J_RETURN_IF_ERROR(append_bytes(payload_head));
  for (auto piece : payload_body) H5J_RETURN_IF_ERROR(append_bytes(piece));
  H5J_RETURN_IF_ERROR(append_bytes(std::span(kZeros, pad)));
  if (type != RecordType::kCommit) ++txn_records_;
  return Status::ok();
}

// One allocation for the whole ring, at the first record: each mapping
// costs page faults to make and a TLB flush to undo, and a session that
// commits nothing (a file created and closed, close_uncommitted.cc) needs
// none.  The last session's ring if the pool kept one (buffer_pool.h): its
// pages are faulted in already.  In small pages: a commit writes the start
// of one buffer, and a huge page would be zeroed whole for it
// (huge_pages.h).
Status JournalWriter::allocate_ring() {
  const size_t size = ring_.size() * opts_.buffer_size;
  std::optional<AlignedBuffer> kept = opts_.pool ? opts_.pool->take(size, Pages::kSmall) : std::nullopt;
  if (kept) {
    ring_mem_ = std::move(*kept);
  } else {
    auto mem = file_.allocate_buffer(size, Pages::kSmall);
    if (!mem) return mem.status();
    ring_mem_ = std::move(*mem);
  }
  for (size_t i = 0; i < ring_.size(); ++i)
    ring_[i].mem = std::span(ring_mem_.data() + i * opts_.buffer_size, opts_.buffer_size);
  return Status::ok();
}

void JournalWriter::give_back_ring() {
  ring_given_back_ = true;
  if (opts_.pool == nullptr || !ring_mem_.valid()) return;
  // The kernel may still be writing from it (io_uring): not another
  // writer's until every write is done.
  if (!file_.wait_write(UINT64_MAX)) return;
  for (Buffer& b : ring_) b.mem = {};
  opts_.pool->give_back(std::move(ring_mem_), Pages::kSmall);
}

Status JournalWriter::append_bytes(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    Buffer& b = cur();
    size_t n = std::min(bytes.size(), b.mem.size() - b.used);
    std::memcpy(b.mem.data() + b.used, bytes.data(), n);
    b.used += n;
    bytes = bytes.subspan(n);
    if (b.used == b.mem.size()) {
      H5J_RETURN_IF_ERROR(submit(b));
      H5J_RETURN_IF_ERROR(rotate(b.base + b.used));
    }
  }
  return Status::ok();
}

Status JournalWriter::submit(Buffer& b) {
  if (b.used == b.submitted) return Status::ok();
  H5J_RETURN_IF_ERROR(reserve(b.base + b.used));
  auto ticket = file_.submit_write(b.base + b.submitted,
                                   std::span<const std::byte>(b.mem.data() + b.submitted, b.used - b.submitted));
  if (!ticket) return ticket.status();
  b.ticket = *ticket;
  b.submitted = b.used;
  return Status::ok();
}

// Why zeros ahead: a commit's fdatasync on a journal that grows must also
// commit the file system's metadata (the new size and blocks); on one that
// is overwritten it need not.  Measured on this project's ext4 machines,
// fdatasync after a 4 KiB write: 176 us p50 appending, 78 us overwriting.
// fallocate does not help: the first write into its unwritten extents is a
// metadata change too.  So the journal is written with zeros ahead, and the
// cost of growing is paid once per step, not per commit.  After a
// checkpoint the next generation overwrites the same space.
//
// How far ahead: kFirstZerosAhead at the session's first commit, and twice
// the step before at each later one, up to kMaxZerosAhead.  The first
// commit syncs its zeros with it, so a short session (a file per time step,
// a few large steps: W4's 16 steps of 4 MiB write 64 KiB of records in all)
// would otherwise sync 2 MiB of zeros it never uses, 0.9 ms at 2.3 GB/s;
// a long one still grows its journal once every 2 MiB of records.
//
// The zeros are written synchronously, before the record write that needs
// them is submitted; no write in flight reaches past allocated_end_, so none
// can race with them.  Without durability nothing is synced, and there is
// nothing to save.
//
// A close's commit writes none: the journal ends with it.  A job that
// writes its file and closes it commits once, and zeros its commit synced
// would be bytes on the disk for nothing.  Nor does a journal whose commits
// a thread syncs in the background (durable_within): one sync covers many
// commits, so the journal's growth costs a sync's metadata once an
// interval, while zeros ahead cost the writer a 256 KiB write every so
// often and the disk their bytes (W4's 500 steps of 8 KiB: 4 MiB of zeros
// for 2.5 MiB of records).
//
// Zeros are a speed-up, not a promise: on a full disk (ENOSPC, EDQUOT) they
// are taken back, and the journal grows record by record from then on, so
// a nearly full disk holds as many commits as it would without them.
Status JournalWriter::reserve(uint64_t end) {
  if (end <= allocated_end_ || !opts_.durable || !preallocate_) return Status::ok();
  const uint64_t start = allocated_end_;
  const uint64_t target = align_up(end, kZerosAlign) + zeros_ahead_;
  for (uint64_t at = start; at < target;) {
    size_t n = size_t(std::min<uint64_t>(sizeof kZeros, target - at));
    Status s = file_.write_at(at, std::span(kZeros, n));
    if (s.code() == Code::kNoSpace) {
      preallocate_ = false;
      return file_.truncate(start);
    }
    H5J_RETURN_IF_ERROR(s);
    at += n;
  }
  allocated_end_ = target;
  zeros_ahead_ = std::min(zeros_ahead_ * 2, kMaxZerosAhead);
  return Status::ok();
}

Status JournalWriter::rotate(uint64_t base) {
  cur_ = (cur_ + 1) % ring_.size();
  Buffer& next = cur();
  // Backpressure: the oldest buffer is reused only once its write is done.
  if (next.ticket != 0) H5J_RETURN_IF_ERROR(file_.wait_write(next.ticket));
  next.base = base;
  next.used = next.submitted = 0;
  next.ticket = 0;
  return Status::ok();
}

// Small reads of records near one another (HDF5 reading back journaled
// metadata, a lone range of a checkpoint's) are served from a window: a
// read of the file takes up to kReadAhead bytes, and the reads after it
// that fall inside them are copied from memory.  A read of kReadAlone
// bytes or more (a checkpoint's joined reads, gathered_reads.h) pays for
// its own system call, and through the window would be copied twice.
//
// The window is small because its pages are new to the process: on the
// benchmark's virtual machines a page's first touch costs 13 us, so a
// window of 256 KiB cost 0.8 ms at a session's close, a third of what the
// close cost beyond sec2's (docs/performance.md).
Status JournalWriter::read_written(uint64_t offset, std::span<std::byte> out, uint64_t limit) {
  // A read past the records appended (none of the engine's) goes to the
  // file as asked, and fails there if the file is shorter.
  if (out.size() >= kReadAlone || limit < offset || limit - offset < out.size()) return read_exact(file_, offset, out);
  auto bytes = window_.read(file_, offset, out.size(), limit);
  if (!bytes) return bytes.status();
  std::memcpy(out.data(), bytes->data(), out.size());
  return Status::ok();
}

Status JournalWriter::read(uint64_t offset, std::span<std::byte> out) {
  assert(!ring_given_back_);
  while (!out.empty()) {
    const Buffer* holder = nullptr;
    for (const auto& b : ring_)
      if (b.used > 0 && offset >= b.base && offset < b.base + b.used) holder = &b;
    size_t n;
    if (holder != nullptr) {
      n = std::min<uint64_t>(out.size(), holder->base + holder->used - offset);
      std::memcpy(out.data(), holder->mem.data() + (offset - holder->base), n);
    } else {
      // Not in any buffer, so its write completed before the buffer was reused.
      uint64_t limit = UINT64_MAX;
      for (const auto& b : ring_)
        if (b.used > 0 && b.base > offset) limit = std::min(limit, b.base);
      n = std::min<uint64_t>(out.size(), limit - offset);
      H5J_RETURN_IF_ERROR(read_written(offset, out.subspan(0, n), std::min(limit, tell())));
    }
    offset += n;
    out = out.subspan(n);
  }
  return Status::ok();
}

}  // namespace h5j
