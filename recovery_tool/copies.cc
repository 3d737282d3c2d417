#include "copies.h"

#include "binding.h"
#include "data_logs.h"
#include "posix_file.h"

namespace h5j {

Status copy_file(const std::string& from, const std::string& to) {
  auto in = posix_filesystem().open(from, OpenMode::kReadOnly, IoEngine::kSync);
  if (!in) return in.status();
  auto out = posix_filesystem().open(to, OpenMode::kCreateTruncate, IoEngine::kSync);
  if (!out) return out.status();
  auto buffer = (*in)->allocate_buffer(8 << 20);
  if (!buffer) return buffer.status();
  for (uint64_t off = 0;;) {
    auto n = (*in)->read_at(off, std::span(buffer->data(), buffer->size()));
    if (!n) return n.status();
    if (*n == 0) break;
    H5J_RETURN_IF_ERROR((*out)->write_at(off, std::span<const std::byte>(buffer->data(), *n)));
    off += *n;
  }
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
