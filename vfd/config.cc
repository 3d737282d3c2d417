#include "config.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>

#include "file.h"
#include "fnv1a.h"
#include "journal_options.h"

namespace h5j {
namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\n");
  auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// A byte count with an optional K/M/G/T suffix (powers of 1024).
bool parse_bytes(const std::string& v, uint64_t& out) {
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0]))) return false;
  size_t end = 0;
  unsigned long long n;
  try {
    n = std::stoull(v, &end, 10);
  } catch (...) {
    return false;
  }
  std::string suffix = v.substr(end);
  int shift = 0;
  if (suffix == "" || suffix == "B") shift = 0;
  else if (suffix == "K" || suffix == "KiB") shift = 10;
  else if (suffix == "M" || suffix == "MiB") shift = 20;
  else if (suffix == "G" || suffix == "GiB") shift = 30;
  else if (suffix == "T" || suffix == "TiB") shift = 40;
  else return false;
  if (shift > 0 && n > (UINT64_MAX >> shift)) return false;
  out = uint64_t(n) << shift;
  return true;
}

// One of a fixed set of words, each naming a value of an enum field.
template <typename E>
bool parse_choice(const std::string& v, std::initializer_list<std::pair<const char*, E>> choices, E& out) {
  for (const auto& [word, value] : choices)
    if (v == word) {
      out = value;
      return true;
    }
  return false;
}

// Whole numbers of at most 9 digits (seconds, milliseconds).
bool parse_whole(const std::string& v, uint32_t& out) {
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) return false;
  out = uint32_t(std::stoul(v));
  return true;
}

// An interval: a whole number and ms, s, min or h.
bool parse_interval_ms(const std::string& v, uint32_t& out) {
  size_t digits = v.find_first_not_of("0123456789");
  if (digits == 0 || digits == std::string::npos || digits > 9) return false;
  uint64_t n = std::stoull(v.substr(0, digits));
  std::string unit = v.substr(digits);
  uint64_t ms = unit == "ms"    ? n
                : unit == "s"   ? n * 1000
                : unit == "min" ? n * 60000
                : unit == "h"   ? n * 3600000
                                : UINT64_MAX;
  if (ms > kMaxDurableWithinMs) return false;
  out = uint32_t(ms);
  return true;
}

bool parse_bool(const std::string& v, hbool_t& out) {
  if (v == "true" || v == "1" || v == "yes" || v == "on") return out = true, true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return out = false, true;
  return false;
}

using Setter = std::function<bool(const std::string&, H5FD_journal_fapl_t&)>;

const std::map<std::string, std::pair<Setter, const char*>>& setters() {
  static const std::map<std::string, std::pair<Setter, const char*>> table = {
      {"journal_path",
       {[](const std::string& v, H5FD_journal_fapl_t& c) {
          if (v.size() >= sizeof c.journal_path) return false;
          std::memcpy(c.journal_path, v.c_str(), v.size() + 1);
          return true;
        },
        "a path shorter than 4096 bytes"}},
      {"ring_buffers",
       {[](const std::string& v, H5FD_journal_fapl_t& c) {
          uint64_t n;
          if (!parse_bytes(v, n) || n > 1024 || v.find_first_not_of("0123456789") != std::string::npos)
            return false;
          c.ring_buffers = uint32_t(n);
          return true;
        },
        "a whole number from 2 to 1024"}},
      {"buffer_size",
       {[](const std::string& v, H5FD_journal_fapl_t& c) { return parse_bytes(v, c.buffer_size); },
        "a size such as 1M (at least 4K)"}},
      {"io_engine",
       {[](const std::string& v, H5FD_journal_fapl_t& c) {
          return parse_choice(
              v, {{"auto", H5FD_JOURNAL_IO_AUTO}, {"uring", H5FD_JOURNAL_IO_URING}, {"sync", H5FD_JOURNAL_IO_SYNC}},
              c.io_engine);
        },
        "auto, uring or sync"}},
      {"durable",
       {[](const std::string& v, H5FD_journal_fapl_t& c) {
          c.durable_within_ms = 0;
          if (parse_bool(v, c.durable)) return true;
          c.durable = true;
          return parse_interval_ms(v, c.durable_within_ms) && c.durable_within_ms > 0;
        },
        "true, false, or an interval from 1ms to 1h, such as 100ms, 2s or 1min"}},
      {"checkpoint_bytes",
       {[](const std::string& v, H5FD_journal_fapl_t& c) { return parse_bytes(v, c.checkpoint_bytes); },
        "a size such as 16M, or 0 for the default"}},
      {"recovery",
       {[](const std::string& v, H5FD_journal_fapl_t& c) {
          return parse_choice(v, {{"auto", H5FD_JOURNAL_RECOVERY_AUTO}, {"refuse", H5FD_JOURNAL_RECOVERY_REFUSE}},
                              c.recovery);
        },
        "auto or refuse"}},
      {"raw",
       {[](const std::string& v, H5FD_journal_fapl_t& c) {
          return parse_choice(
              v, {{"inplace", H5FD_JOURNAL_RAW_INPLACE}, {"log", H5FD_JOURNAL_RAW_LOG}, {"auto", H5FD_JOURNAL_RAW_AUTO}},
              c.raw);
        },
        "inplace, log or auto"}},
      {"materialize",
       {[](const std::string& v, H5FD_journal_fapl_t& c) {
          return parse_choice(
              v, {{"close", H5FD_JOURNAL_MATERIALIZE_CLOSE}, {"never", H5FD_JOURNAL_MATERIALIZE_NEVER}}, c.materialize);
        },
        "close or never"}},
      {"mpi_comm",
       {[](const std::string& v, H5FD_journal_fapl_t& c) {
          return parse_choice(v, {{"world", H5FD_JOURNAL_MPI_COMM_WORLD}, {"self", H5FD_JOURNAL_MPI_COMM_SELF}},
                              c.mpi_comm);
        },
        "world or self"}},
      {"mpi_timeout",
       {[](const std::string& v, H5FD_journal_fapl_t& c) { return parse_whole(v, c.mpi_timeout); },
        "whole seconds, 0 for no deadline"}},
      {"reader_wait",
       {[](const std::string& v, H5FD_journal_fapl_t& c) { return parse_whole(v, c.reader_wait); },
        "whole milliseconds"}},
  };
  return table;
}

}  // namespace

H5FD_journal_fapl_t default_config() {
  H5FD_journal_fapl_t c;
  std::memset(&c, 0, sizeof c);
  c.version = H5FD_JOURNAL_FAPL_VERSION;
  c.ring_buffers = 4;
  c.buffer_size = 1 << 20;
  c.io_engine = H5FD_JOURNAL_IO_AUTO;
  c.durable = true;
  c.checkpoint_bytes = 0;  // default_checkpoint_bytes(durable) (journal_options.h)
  c.recovery = H5FD_JOURNAL_RECOVERY_AUTO;
  c.raw = H5FD_JOURNAL_RAW_INPLACE;
  c.materialize = H5FD_JOURNAL_MATERIALIZE_CLOSE;
  c.mpi_comm = H5FD_JOURNAL_MPI_COMM_SELF;
  c.mpi_timeout = 600;
  c.reader_wait = uint32_t(kDefaultReaderWait.count());
  return c;
}

Status validate_config(const H5FD_journal_fapl_t& c) {
  auto bad = [](const std::string& m) { return Status(Code::kInvalid, "h5journal configuration: " + m); };
  if (c.version != H5FD_JOURNAL_FAPL_VERSION)
    return bad("version " + std::to_string(c.version) + " is not " + std::to_string(H5FD_JOURNAL_FAPL_VERSION));
  if (c.ring_buffers < 2 || c.ring_buffers > 1024) return bad("ring_buffers must be from 2 to 1024");
  if (c.buffer_size < 4096 || c.buffer_size > (uint64_t(1) << 30))
    return bad("buffer_size must be from 4K to 1G");
  if (c.io_engine < H5FD_JOURNAL_IO_AUTO || c.io_engine > H5FD_JOURNAL_IO_SYNC) return bad("bad io_engine");
  if (c.recovery < H5FD_JOURNAL_RECOVERY_AUTO || c.recovery > H5FD_JOURNAL_RECOVERY_REFUSE)
    return bad("bad recovery");
  if (c.raw < H5FD_JOURNAL_RAW_INPLACE || c.raw > H5FD_JOURNAL_RAW_AUTO) return bad("bad raw");
  if (c.materialize < H5FD_JOURNAL_MATERIALIZE_CLOSE || c.materialize > H5FD_JOURNAL_MATERIALIZE_NEVER)
    return bad("bad materialize");
  if (c.mpi_comm < H5FD_JOURNAL_MPI_COMM_WORLD || c.mpi_comm > H5FD_JOURNAL_MPI_COMM_SELF) return bad("bad mpi_comm");
  if (memchr(c.journal_path, '\0', sizeof c.journal_path) == nullptr) return bad("journal_path is not terminated");
  if (c.durable_within_ms > kMaxDurableWithinMs)
    return bad("durable_within_ms must be at most " + std::to_string(kMaxDurableWithinMs) + " (an hour)");
  if (c.durable_within_ms != 0 && !c.durable)
    return bad("durable_within_ms applies with durable true: commits made durable within an interval");
  return Status::ok();
}

// Split without a std::stringstream: a process's first one sets up
// iostreams' locale, which cost a C program's first open about 0.2 ms.
Status parse_config(const std::string& text, H5FD_journal_fapl_t& config) {
  for (size_t start = 0, end = 0; start <= text.size(); start = end + 1) {
    end = std::min(text.find(';', start), text.size());
    std::string item = text.substr(start, end - start);
    if (trim(item).empty()) continue;
    auto eq = item.find('=');
    std::string key = trim(item.substr(0, eq));
    if (eq == std::string::npos)
      return Status(Code::kInvalid, "h5journal configuration: \"" + key + "\" has no value (expected key=value)");
    std::string value = trim(item.substr(eq + 1));
    auto it = setters().find(key);
    if (it == setters().end()) {
      std::string known;
      for (const auto& [k, _] : setters()) known += (known.empty() ? "" : ", ") + k;
      return Status(Code::kInvalid, "h5journal configuration: unknown key \"" + key + "\" (known keys: " + known + ")");
    }
    if (!it->second.first(value, config))
      return Status(Code::kInvalid, "h5journal configuration: bad value \"" + value + "\" for " + key +
                                        " (expected " + it->second.second + ")");
  }
  return validate_config(config);
}

namespace {
// `file` from the root: its directory resolved (symbolic links, "..") when
// it exists, else made absolute from the working directory.
std::string absolute_path(const std::string& file) {
  auto [dir, name] = split_directory(file);
  if (char* real = ::realpath(dir.c_str(), nullptr)) {
    dir = real;
    std::free(real);
  } else {
    dir = absolute_name(dir);
  }
  return dir + "/" + name;
}
}  // namespace

std::string journal_path_for(const std::string& file, const H5FD_journal_fapl_t& config) {
  std::string configured = config.journal_path;
  if (configured.empty()) return file + ".jnl";
  if (configured.back() != '/') return configured;
  // A directory holds the journals of many files, one each: named after the
  // file and a hash of its absolute path, since files of one name in
  // different directories (each run of an ensemble writing out.h5) must
  // never share one.  A journal of another file's is not this file's to
  // empty or replay.
  auto slash = file.rfind('/');
  std::string path = absolute_path(file);
  char tag[17];
  std::snprintf(tag, sizeof tag, "%016llx", static_cast<unsigned long long>(fnv1a64(path.data(), path.size())));
  return configured + (slash == std::string::npos ? file : file.substr(slash + 1)) + "." + tag + ".jnl";
}

FileLocking file_locking(hid_t fapl) {
  hbool_t use = true, ignore_disabled = true;
  if (fapl >= 0) H5Pget_file_locking(fapl, &use, &ignore_disabled);
  FileLocking l{bool(use), bool(ignore_disabled)};
  // As H5F__parse_file_lock_env_var: an unknown value is no setting.
  std::string v = std::getenv("HDF5_USE_FILE_LOCKING") ? std::getenv("HDF5_USE_FILE_LOCKING") : "";
  if (v == "FALSE" || v == "0") l.use = false;
  if (v == "BEST_EFFORT") l = {true, true};
  if (v == "TRUE" || v == "1") l = {true, false};
  return l;
}

}  // namespace h5j
