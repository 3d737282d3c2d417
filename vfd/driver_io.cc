// Reads and writes, and HDF5's commit points (flush and truncate).
//
// HDF5's H5Fflush calls truncate(closing=false) and then
// flush(closing=false); that pair commits.  H5Dflush and H5Oflush reach
// flush() without a truncate and do not.  H5Fclose writes the final
// superblock after its last flush(), so close() commits (driver_open.cc).
#include "driver_file.h"
#include "selection_pieces.h"

namespace h5j {
namespace {

// The pieces of a raw transfer under MPI's collective layout, or none.
Result<std::vector<CollectivePiece>> collective_transfer(JournalDriverFile& f, haddr_t addr, size_t size) {
  if (!f.ranks) return std::vector<CollectivePiece>();
  return f.ranks->transfer_pieces(addr, size);
}

// A raw write's end: under MPI, what the ranks' collective call needs.
Status end_of_raw_write(JournalDriverFile& f, bool raw, const Status& local) {
  return f.ranks && raw ? f.ranks->end_raw_write(*f.file, local) : local;
}

Status read_pieces(JournaledFile& f, std::span<const CollectivePiece> pieces, std::byte* buf) {
  for (const CollectivePiece& p : pieces) H5J_RETURN_IF_ERROR(f.read(p.addr, std::span(buf + p.memory, p.length)));
  return Status::ok();
}

Status write_pieces(JournaledFile& f, H5FD_mem_t type, std::span<const CollectivePiece> pieces, const std::byte* buf) {
  std::vector<RawPiece> raw;
  for (const CollectivePiece& p : pieces) {
    auto bytes = std::span(buf + p.memory, p.length);
    if (type == H5FD_MEM_DRAW) raw.push_back({p.addr, bytes});
    else H5J_RETURN_IF_ERROR(f.write(p.addr, bytes, uint32_t(type)));
  }
  return raw.empty() ? Status::ok() : f.write_raw(raw, uint32_t(type));
}

// One read, without taking in the other ranks' data logs first.
Status read_one(JournalDriverFile& file, H5FD_mem_t type, haddr_t addr, size_t size, std::byte* out) {
  // As mpio: only raw data reads take the collective layout.
  auto pieces = type == H5FD_MEM_DRAW ? collective_transfer(file, addr, size) : std::vector<CollectivePiece>();
  if (!pieces) return pieces.status();
  return pieces->empty() ? file.file->read(addr, std::span(out, size)) : read_pieces(*file.file, *pieces, out);
}

// Vector I/O.  Having these callbacks turns on HDF5's selection I/O: a
// hyperslab write arrives as one vector of all its pieces (a 32^3 box of a
// 3-D array: 1024 runs) instead of through the sieve buffer, so raw data
// can be logged as one pattern.  In the arrays (these and write_selection's
// below), a size of 0, a type of H5FD_MEM_NOLIST or a null buffer means
// "as the previous element" from there on.

// One of those arrays, read in order: from the first element past the
// first that holds `sentinel` on, every element is the one before it.
template <typename T>
class ExtendedArray {
 public:
  ExtendedArray(const T* values, T sentinel) : values_(values), sentinel_(sentinel) {}
  T at(size_t i) {
    fixed_ = fixed_ || (i > 0 && values_[i] == sentinel_);
    if (!fixed_) current_ = values_[i];
    return current_;
  }

 private:
  const T* values_;
  T sentinel_;
  bool fixed_ = false;
  T current_{};
};

template <typename F>
void for_each_element(uint32_t count, const H5FD_mem_t types[], const size_t sizes[], F&& f) {
  ExtendedArray<H5FD_mem_t> type(types, H5FD_MEM_NOLIST);
  ExtendedArray<size_t> size(sizes, 0);
  for (uint32_t i = 0; i < count; i++) f(i, type.at(i), size.at(i));
}

// HDF5 puts the superblock at the file's base address: after a user block,
// if it has one.  It sets that address before its first write, and the
// guard keeps to it (superblock_guard.h), whatever raw data holds.
void tell_superblock(H5FD_t* file) { self(file)->file->base().superblock_is_at(file->base_addr); }

}  // namespace

herr_t journal_read(H5FD_t* file, H5FD_mem_t type, hid_t, haddr_t addr, size_t size, void* buf) {
  return exceptions_as_errors("H5FD_journal_read", herr_t(-1), [&]() -> herr_t {
    // Raw data another rank wrote since the last commit is in its data log.
    Status s = type == H5FD_MEM_DRAW ? self(file)->file->refresh_peers() : Status::ok();
    if (s) s = read_one(*self(file), type, addr, size, static_cast<std::byte*>(buf));
    if (!s) return push_error("H5FD_journal_read", H5E_READERROR, s);
    return 0;
  });
}

herr_t journal_write(H5FD_t* file, H5FD_mem_t type, hid_t, haddr_t addr, size_t size, const void* buf) {
  return exceptions_as_errors("H5FD_journal_write", herr_t(-1), [&]() -> herr_t {
    if (Status s = refuse_if_forked(*self(file)); !s) return push_error("H5FD_journal_write", H5E_WRITEERROR, s);
    auto in = static_cast<const std::byte*>(buf);
    auto bytes = std::span(in, size);
    JournaledFile& f = *self(file)->file;
    tell_superblock(file);
    auto pieces = collective_transfer(*self(file), addr, size);
    Status s = !pieces              ? pieces.status()
               : !pieces->empty()   ? write_pieces(f, type, *pieces, in)
               : type == H5FD_MEM_DRAW ? f.write_raw(addr, bytes, uint32_t(type))
                                       : f.write(addr, bytes, uint32_t(type));
    s = end_of_raw_write(*self(file), type == H5FD_MEM_DRAW, s);
    if (!s) return push_error("H5FD_journal_write", H5E_WRITEERROR, s);
    return 0;
  });
}

herr_t journal_read_vector(H5FD_t* file, hid_t, uint32_t count, H5FD_mem_t types[], haddr_t addrs[],
                           size_t sizes[], void* bufs[]) {
  return exceptions_as_errors("H5FD_journal_read_vector", herr_t(-1), [&]() -> herr_t {
    bool raw = false;
    for_each_element(count, types, sizes, [&](uint32_t, H5FD_mem_t type, size_t) { raw = raw || type == H5FD_MEM_DRAW; });
    Status s = raw ? self(file)->file->refresh_peers() : Status::ok();  // once for the whole vector
    for_each_element(count, types, sizes, [&](uint32_t i, H5FD_mem_t type, size_t size) {
      if (s) s = read_one(*self(file), type, addrs[i], size, static_cast<std::byte*>(bufs[i]));
    });
    if (!s) return push_error("H5FD_journal_read_vector", H5E_READERROR, s);
    return 0;
  });
}

// Runs of raw pieces go to write_raw together; metadata one by one.
herr_t journal_write_vector(H5FD_t* file, hid_t, uint32_t count, H5FD_mem_t types[], haddr_t addrs[],
                            size_t sizes[], const void* bufs[]) {
  return exceptions_as_errors("H5FD_journal_write_vector", herr_t(-1), [&]() -> herr_t {
    JournaledFile& f = *self(file)->file;
    std::vector<RawPiece>& raw = self(file)->raw_pieces.pieces;
    raw.clear();
    Status s = refuse_if_forked(*self(file));
    tell_superblock(file);
    bool all_raw = true;
    auto flush_raw = [&]() {
      if (s && !raw.empty()) s = f.write_raw(raw, uint32_t(H5FD_MEM_DRAW));
      raw.clear();
    };
    for_each_element(count, types, sizes, [&](uint32_t i, H5FD_mem_t type, size_t size) {
      auto bytes = std::span(static_cast<const std::byte*>(bufs[i]), size);
      if (type == H5FD_MEM_DRAW) {
        raw.push_back({addrs[i], bytes});
        return;
      }
      all_raw = false;
      flush_raw();
      if (s) s = f.write(addrs[i], bytes, uint32_t(type));
    });
    flush_raw();
    s = end_of_raw_write(*self(file), all_raw, s);
    if (!s) return push_error("H5FD_journal_write_vector", H5E_WRITEERROR, s);
    return 0;
  });
}

// Selection I/O: the same as the vector write, the pieces walked here in
// batches (selection_pieces.h) instead of built into a vector by HDF5.
herr_t journal_write_selection(H5FD_t* file, H5FD_mem_t type, hid_t, size_t count, hid_t mem_spaces[],
                               hid_t file_spaces[], haddr_t offsets[], size_t element_sizes[], const void* bufs[]) {
  return exceptions_as_errors("H5FD_journal_write_selection", herr_t(-1), [&]() -> herr_t {
    JournaledFile& f = *self(file)->file;
    auto write_batch = [&](std::span<const RawPiece> pieces) -> Status {
      if (type == H5FD_MEM_DRAW) return f.write_raw(pieces, uint32_t(type));
      for (const RawPiece& p : pieces) H5J_RETURN_IF_ERROR(f.write(p.addr, p.bytes, uint32_t(type)));
      return Status::ok();
    };
    Status s = refuse_if_forked(*self(file));
    tell_superblock(file);
    ExtendedArray<size_t> element_size(element_sizes, 0);
    ExtendedArray<const void*> buf(bufs, nullptr);
    for (size_t i = 0; i < count && s; ++i)
      s = for_each_selection_batch(mem_spaces[i], file_spaces[i], offsets[i], element_size.at(i), buf.at(i),
                                   self(file)->raw_pieces, write_batch);
    s = end_of_raw_write(*self(file), type == H5FD_MEM_DRAW, s);
    if (!s) return push_error("H5FD_journal_write_selection", H5E_WRITEERROR, s);
    return 0;
  });
}

herr_t journal_flush(H5FD_t* file, hid_t, hbool_t closing) {
  return exceptions_as_errors("H5FD_journal_flush", herr_t(-1), [&]() -> herr_t {
    JournalDriverFile* f = self(file);
    if (closing || !f->commit_pending) return 0;  // H5Dflush, H5Oflush, or close (close() commits)
    f->commit_pending = false;
    Status s = refuse_if_forked(*f);
    if (s) s = commit(*f);
    if (!s) return push_error("H5FD_journal_flush", H5E_CANTFLUSH, s);
    return 0;
  });
}

herr_t journal_truncate(H5FD_t* file, hid_t, hbool_t closing) {
  return exceptions_as_errors("H5FD_journal_truncate", herr_t(-1), [&]() -> herr_t {
    JournalDriverFile* f = self(file);
    Status s = refuse_if_forked(*f);
    if (s) s = f->file->set_size(f->eoa);
    if (!s) return push_error("H5FD_journal_truncate", H5E_CANTUPDATE, s);
    if (!closing) f->commit_pending = true;
    return 0;
  });
}

}  // namespace h5j
