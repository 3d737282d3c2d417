// Errors are values.  Every fallible operation in the journal engine returns a
// Status (or a Result<T>), whose message names the file and the problem so
// that the driver can hand it to HDF5's error stack unchanged.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace h5j {

enum class Code {
  kOk = 0,
  kIoError,        // EIO and other errors from the operating system
  kNoSpace,        // ENOSPC / EDQUOT
  kCorrupt,        // a journal that fails validation where it must not
  kForeign,        // a journal that belongs to another file
  kMissing,        // a file that should exist and does not
  kNeedsRecovery,  // committed work waits in the journal and recovery=refuse
  kInvalid,        // bad argument or configuration
  kFailStopped,    // a sync failed earlier: nothing more is accepted
  kBusy,           // another handle owns the journal
  kNeverCommitted, // a journal whose file never reached a first commit: nothing to recover
  kUnsupported,    // the file system lacks what was asked (a lock that other processes see)
  kBaseMismatch,   // the file is shorter than its journal needs, or not the file it was written against
  kExpired,        // a live reader's snapshot, rewritten by its writer (live_readers.h)
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message, int sys_errno = 0)
      : code_(code), message_(std::move(message)), sys_errno_(sys_errno) {}

  static Status ok() { return {}; }
  // An error from errno, with the operation and path that met it.
  static Status from_errno(int err, const std::string& what);

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // The errno the system gave for this error, or 0 where it gave none.
  // HDF5's drivers report it, and h5py picks the exception by it
  // (FileNotFoundError, BlockingIOError, ...).
  int sys_errno() const { return sys_errno_; }
  // The same error, its message after `context`.
  Status prefixed(const std::string& context) const { return Status(code_, context + message_, sys_errno_); }
  // The same error, `more` after its message.
  Status appended(const std::string& more) const { return Status(code_, message_ + more, sys_errno_); }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  int sys_errno_ = 0;
};

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).is_ok()); }

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  Status status() const { return is_ok() ? Status::ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

// The status of either: for code that takes both.
inline const Status& status_of(const Status& s) { return s; }
template <typename T>
Status status_of(const Result<T>& r) {
  return r.status();
}

#define H5J_RETURN_IF_ERROR(expr)          \
  do {                                     \
    ::h5j::Status h5j_s_ = (expr);         \
    if (!h5j_s_.is_ok()) return h5j_s_;    \
  } while (0)

}  // namespace h5j
