#include "copies.h"

#include <algorithm>

#include "binding.h"
#include "data_logs.h"
#include "posix_file.h"

namespace h5j {
namespace {

// [from, to) of `in` into `out`, at the same offsets.
Status copy_range(File& in, File& out, uint64_t from, uint64_t to, std::span<std::byte> buffer) {
  while (from < to) {
    auto n = in.read_at(from, buffer.first(size_t(std::min<uint64_t>(buffer.size(), to - from))));
    if (!n) return n.status();
    if (*n == 0) return Status::ok();  // cut short since its size was read
    H5J_RETURN_IF_ERROR(out.write_at(from, buffer.first(*n)));
    from += *n;
  }
  return Status::ok();
}

}  // namespace

Status copy_file(const std::string& from, const std::string& to) {
  auto in = posix_filesystem().open(from, OpenMode::kReadOnly, IoEngine::kSync);
  if (!in) return in.status();
  auto out = posix_filesystem().open(to, OpenMode::kCreateTruncate, IoEngine::kSync);
  if (!out) return out.status();
  auto size = (*in)->size();
  if (!size) return size.status();
  auto buffer = (*in)->allocate_buffer(8 << 20, Pages::kSystem);
  if (!buffer) return buffer.status();
  // Only the runs that hold data: a sparse file's holes stay holes, so the
  // copy takes the space the file takes, not its size.
  for (uint64_t off = 0; off < *size;) {
    File::DataRun run = (*in)->data_run(off);
    if (run.first >= *size) break;
    off = std::min(run.end, *size);
    H5J_RETURN_IF_ERROR(copy_range(**in, **out, run.first, off, std::span(buffer->data(), buffer->size())));
  }
  H5J_RETURN_IF_ERROR((*out)->truncate(*size));
  for (const char* name : kRecoveryXattrs) {
    auto value = (*in)->get_xattr(name);
    if (value && value->has_value()) (void)(*out)->set_xattr(name, **value);
  }
  return (*out)->sync_all();
}

Status copy_for_output(const std::string& file, const std::string& journal, const std::string& output) {
  H5J_RETURN_IF_ERROR(copy_file(file, output));
  H5J_RETURN_IF_ERROR(copy_file(journal, output + ".jnl"));
  // The data logs: one per MPI rank that opened the file, not always numbered without gaps.
  auto logs = existing_data_logs(posix_filesystem(), journal);
  if (!logs) return logs.status();
  for (uint32_t n : *logs) H5J_RETURN_IF_ERROR(copy_file(data_log_path_for(journal, n), data_log_path_for(output + ".jnl", n)));
  return Status::ok();
}

}  // namespace h5j
