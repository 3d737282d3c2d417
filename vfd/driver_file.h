// The driver's own types, shared by its files (not installed):
//   h5fd_journal.cc   the class table, queries, the FAPL, the public API
//   driver_open.cc    open, close and delete
//   driver_io.cc      reads, writes (single, vector, selection), flush,
//                     truncate: HDF5's commit points
#pragma once

#include <H5FDdevelop.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "h5journal.h"
#include "journaled_file.h"
#include "opener_process.h"
#include "rank_group.h"
#include "selection_pieces.h"

namespace h5j {

struct JournalDriverFile {
  H5FD_t pub;  // must be first: HDF5 fills it after open()
  std::unique_ptr<JournaledFile> file;
  H5FD_journal_fapl_t config;
  // Chosen by name with a configuration string, the FAPL carries no driver
  // info, and H5Fget_access_plist must return one that compares equal.
  bool config_from_string = false;
  haddr_t eoa = 0;
  FileId id;
  bool commit_pending = false;  // truncate(closing=false) seen: the next flush() commits
  std::unique_ptr<RankGroup> ranks;  // null: opened by this process alone
  // The raw pieces of write_vector and write_selection, and the bytes a
  // selection's pieces were gathered into, kept between calls: a strided
  // selection brings a million pieces, and a fresh vector each call costs
  // its page faults again.
  SelectionScratch raw_pieces;
  OpenerProcess opener;
};

// A handle belongs to the process that opened it.  A child that fork()
// copied it shares the parent's descriptors, locks and io_uring ring, but
// not the engine's thread (durable_within).  Were the child to commit or
// close through it, it would checkpoint and remove the journal that the
// parent goes on committing to, and a crash would then lose the parent's
// later commits; a close would wait forever for the missing thread.  So a
// forked child may read through the handle, as through sec2's, and its
// writes, commits and waits are refused; its close leaves the files to the
// parent (journal_close).
inline bool forked_from_opener(const JournalDriverFile& f) { return !f.opener.is_this_process(); }

inline Status refuse_if_forked(const JournalDriverFile& f) {
  if (!forked_from_opener(f)) return Status::ok();
  return Status(Code::kBusy, f.file->base().path() + " was opened through h5journal by process " +
                                 std::to_string(f.opener.pid()) + "; process " + std::to_string(::getpid()) +
                                 ", forked from it, may only read it: open the file again to write it here");
}

// A commit: the file's own, or the ranks' collective one.
inline Status commit(JournalDriverFile& f) { return f.ranks ? f.ranks->commit(*f.file, false) : f.file->commit(); }
// H5Fwait_journal_durable: the file's own wait, or the ranks' collective one.
inline Status wait_durable(JournalDriverFile& f) {
  return f.ranks ? f.ranks->wait_durable(*f.file) : f.file->wait_durable();
}

inline JournalDriverFile* self(H5FD_t* f) { return reinterpret_cast<JournalDriverFile*>(f); }
inline const JournalDriverFile* self(const H5FD_t* f) { return reinterpret_cast<const JournalDriverFile*>(f); }

inline herr_t push_error(const char* func, hid_t minor, const std::string& message) {
  H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, H5E_ERR_CLS, H5E_VFL, minor, "%s", message.c_str());
  return -1;
}

// An error with the errno the system gave, written as sec2 writes it
// ("errno = 2, error message = '...'"): h5py raises FileNotFoundError,
// BlockingIOError and the like by it.
inline std::string error_text(const Status& s, const std::string& context = "") {
  std::string message = context + s.message();
  if (s.sys_errno() != 0)
    message += ", errno = " + std::to_string(s.sys_errno()) + ", error message = '" + std::strerror(s.sys_errno()) + "'";
  return message;
}
inline herr_t push_error(const char* func, hid_t minor, const Status& s, const std::string& context = "") {
  return push_error(func, minor, error_text(s, context));
}

// Runs a callback body; an exception (std::bad_alloc from a growing map, say)
// must not unwind through HDF5's C frames, so it becomes an HDF5 error.
template <typename R, typename F>
R exceptions_as_errors(const char* fn, R on_error, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    push_error(fn, H5E_CANTALLOC, "out of memory");
  } catch (const std::exception& e) {
    push_error(fn, H5E_SYSTEM, std::string("unexpected error: ") + e.what());
  }
  return on_error;
}

// The file system of the driver a FAPL selects (h5fd_journal.cc).
FileSystem& filesystem_for(hid_t fapl);
// The thread that closes the journals a close removed, on the real file
// system; nullptr on any other (a test's, whose operations are not
// thread-safe or must come in order).  Started at its first use, joined
// when HDF5 unregisters the driver (h5fd_journal.cc).
ClosingThread* closing_thread_for(FileSystem& fs);
// The buffers the files of a process share: those every apply works in
// (apply_buffers_pool.h), and the journals' rings, each kept from one
// session for the next (buffer_pool.h).
struct SharedBuffers {
  ApplyBuffersPool applies;
  BufferPool rings;
};
SharedBuffers& shared_buffers();

struct FaplConfig {
  H5FD_journal_fapl_t values;
  bool from_string;  // HDF5_DRIVER_CONFIG or H5Pset_driver_by_name, not H5Pset_fapl_journal
};

// The driver's configuration in a FAPL: H5Pset_fapl_journal's, or a string's.
Result<FaplConfig> config_from_fapl(hid_t fapl);

// The callbacks of driver_open.cc and driver_io.cc.
H5FD_t* journal_open(const char* name, unsigned flags, hid_t fapl, haddr_t maxaddr);
herr_t journal_close(H5FD_t* file);
herr_t journal_delete(const char* name, hid_t fapl);
herr_t journal_read(H5FD_t* file, H5FD_mem_t type, hid_t, haddr_t addr, size_t size, void* buf);
herr_t journal_write(H5FD_t* file, H5FD_mem_t type, hid_t, haddr_t addr, size_t size, const void* buf);
herr_t journal_read_vector(H5FD_t* file, hid_t, uint32_t count, H5FD_mem_t types[], haddr_t addrs[], size_t sizes[],
                           void* bufs[]);
herr_t journal_write_vector(H5FD_t* file, hid_t, uint32_t count, H5FD_mem_t types[], haddr_t addrs[],
                            size_t sizes[], const void* bufs[]);
herr_t journal_write_selection(H5FD_t* file, H5FD_mem_t type, hid_t, size_t count, hid_t mem_spaces[],
                               hid_t file_spaces[], haddr_t offsets[], size_t element_sizes[], const void* bufs[]);
herr_t journal_flush(H5FD_t* file, hid_t, hbool_t closing);
herr_t journal_truncate(H5FD_t* file, hid_t, hbool_t closing);

}  // namespace h5j
