#include "binding.h"

#include "journal_reader.h"

namespace h5j {

std::string journal_target_name(const std::string& path) {
  auto slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return name.substr(0, kMaxTargetName);
}

Result<std::optional<Binding>> read_binding(File& file) {
  auto value = file.get_xattr(kBindingXattr);
  if (!value) return value.status();
  if (!value->has_value()) return std::optional<Binding>();
  return decode_binding(**value);
}

// The path is absolute, so h5recover finds a journal kept elsewhere
// (journal_path=...) from the file alone.
Status write_binding(File& file, const JournalHeader& h, const std::string& journal_path) {
  Binding b{h.uuid, h.generation, absolute_name(journal_path)};
  auto set = file.set_xattr(kBindingXattr, encode_binding(b));
  if (!set) return set.status();
  // The name is an aid to recovery, not a part of the binding: set after
  // it, and not at all where it might leave the file's attribute space
  // (4 KiB on ext4, for every attribute) short for the markers to come.
  std::string name = absolute_name(file.path());
  if (name.size() <= kMaxBoundFileName) (void)file.set_xattr(kBoundFileXattr, name);
  return Status::ok();
}

Status remove_binding(File& file) {
  H5J_RETURN_IF_ERROR(file.remove_xattr(kBindingXattr));
  return file.remove_xattr(kBoundFileXattr);
}

Status check_binding_made_here(FileSystem& fs, File& base) {
  auto binding = read_binding(base);
  if (!binding) return binding.status();
  auto made_on = base.get_xattr(kBoundFileXattr);
  if (!made_on) return made_on.status();
  if (!binding->has_value() || !made_on->has_value()) return Status::ok();
  const std::string& owner = **made_on;
  auto owner_id = fs.id(owner), ours = fs.id(base.path());
  if (!owner_id || !ours || *owner_id == *ours) return Status::ok();
  // Another file under the owner's name: a copy's original still bound to
  // the journal, or a new file made there since this one was moved.
  auto original = fs.open(owner, OpenMode::kReadOnly, IoEngine::kSync);
  if (!original) return Status::ok();
  auto its = read_binding(**original);
  if (!its || !its->has_value() || (*its)->uuid != (*binding)->uuid) return Status::ok();
  const std::string& journal = (*binding)->journal_path;
  return Status(Code::kForeign,
                base.path() + " carries the binding of " + owner + ", copied with its extended attributes (cp -a, "
                "rsync -X): the journal " + journal + " holds the commits of " + owner + ", not of " + base.path() +
                    ", and is left alone. " + base.path() + " holds " + owner + " as it was when copied, which may "
                    "lack commits or be half way through a checkpoint; for a recovered copy, run h5recover --output "
                    "COPY " + owner);
}

Status check_binding_not_missing(File& base, const std::string& journal) {
  auto binding = read_binding(base);
  if (!binding) return binding.status();
  if (!binding->has_value()) return Status::ok();
  const std::string& recorded = (*binding)->journal_path;
  return Status(Code::kMissing, base.path() + " was being written through h5journal, but its journal " +
                                    (recorded.empty() ? journal : recorded) + " is missing; committed changes may be lost");
}

namespace {

// Whether `journal`'s header names the binding `uuid`.
bool carries_uuid(File& journal, const std::array<uint8_t, 16>& uuid) {
  auto reader = JournalReader::open(journal);
  return reader && (*reader)->header().uuid == uuid;
}

}  // namespace

Result<std::unique_ptr<File>> journal_bound_elsewhere(FileSystem& fs, File& base, const std::string& journal) {
  using None = std::unique_ptr<File>;
  auto binding = read_binding(base);
  if (!binding) return binding.status();
  if (!binding->has_value() || (*binding)->journal_path.empty()) return None();
  const std::string& recorded = (*binding)->journal_path;
  if (!fs.exists(recorded)) return None();
  if (fs.exists(journal)) {
    auto bound = fs.id(recorded), ours = fs.id(journal);
    if (!bound) return bound.status();
    if (!ours) return ours.status();
    if (*bound == *ours) return None();
  }
  auto file = fs.open(recorded, OpenMode::kReadOnly, IoEngine::kSync);
  if (!file) return file.status();
  if (!carries_uuid(**file, (*binding)->uuid)) return None();
  Status copied = check_binding_made_here(fs, base);
  // A copy taken with its journal (cp -a run.h5 run.h5.jnl backup/) has
  // the commits beside it, as the original has its own: that journal is
  // the copy's, whatever the binding's path says.
  if (copied.code() == Code::kForeign) {
    auto ours = fs.open(journal, OpenMode::kReadOnly, IoEngine::kSync);
    if (ours && carries_uuid(**ours, (*binding)->uuid)) return None();
  }
  H5J_RETURN_IF_ERROR(copied);
  return std::move(*file);
}

Status check_journal_belongs(File& base, const JournalHeader& h, const std::string& journal_path,
                             const std::string& target_name) {
  auto binding = read_binding(base);
  if (!binding) return binding.status();
  if (!binding->has_value()) {
    if (h.target_name == target_name) return Status::ok();
    return Status(Code::kForeign, "journal " + journal_path + " belongs to another file (written for \"" +
                                      h.target_name + "\")");
  }
  const Binding& b = **binding;
  if (b.uuid != h.uuid)
    return Status(Code::kForeign, "journal " + journal_path + " belongs to another file (journal " + uuid_hex(h.uuid) +
                                      ", file bound to " + uuid_hex(b.uuid) + ")");
  if (b.generation > h.generation)
    return Status(Code::kForeign, "journal " + journal_path + " is older than " + base.path() + " (generation " +
                                      std::to_string(h.generation) + ", file at " + std::to_string(b.generation) + ")");
  return Status::ok();
}

}  // namespace h5j
