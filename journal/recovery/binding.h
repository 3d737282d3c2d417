// The binding: which journal an HDF5 file belongs to, kept in the file itself.
//
// While a file has a journal, the journal's UUID, generation and absolute
// path are stored in the file's extended attribute "user.h5journal" (its
// bytes: format.h, THE BINDING).  So a journal of another file, an older
// generation of this file's journal, or a journal that should exist and
// does not is reported, never silently used or ignored.
//
// Invariant: a binding never names a journal whose directory entry might
// not be durable.  A new journal is bound at its first commit, after the
// directory is synced (commit.cc); the binding is removed, durably, before
// the journal is, or with the retired journal's header
// (JournaledFile::end_close).
#pragma once

#include <optional>
#include <string>

#include "file.h"
#include "format.h"

namespace h5j {

// The name a journal records for `path`: its base name, cut to the format's limit.
std::string journal_target_name(const std::string& path);

// nullopt when the file carries no binding (or the filesystem has no xattrs).
Result<std::optional<Binding>> read_binding(File& file);
// Binds `file` to the journal whose header is `h`, kept at `journal_path`,
// and records the file's own absolute name beside the binding.
Status write_binding(File& file, const JournalHeader& h, const std::string& journal_path);
// Removes the binding and the name recorded beside it; syncs nothing.
Status remove_binding(File& file);
// kForeign when `base`'s binding was copied, with the file's extended
// attributes (cp -a, rsync -X), from the file it was set on: that file is
// still there under the name recorded beside the binding, is not `base`,
// and carries the same binding.  The binding's journal then holds that file's commits, which
// `base` must neither replay nor retire.  A binding with no name recorded,
// or whose file's name is gone or holds a file bound to no such journal
// (the file was moved), or leads to `base` itself (a symbolic or hard
// link), is `base`'s own.
Status check_binding_made_here(FileSystem& fs, File& base);
// kMissing if `base` is bound to a journal (named by its recorded path, or
// `journal`) that does not exist: the caller found none.
Status check_binding_not_missing(File& base, const std::string& journal);
// The journal `base` is bound to, when that is not `journal` (the one this
// open would use) and is there with the binding's UUID: the file is, or
// was until a crash, written through h5journal under another name (a
// symbolic or hard link, another journal_path).  A journal of another file
// made since at the recorded path is not it, nor is one no longer there
// (the file and its journal were moved together), nor, for a copy
// (check_binding_made_here), when `journal` carries the binding's UUID
// too: the copy was taken with its journal.  Returned open for reading;
// null: none.
Result<std::unique_ptr<File>> journal_bound_elsewhere(FileSystem& fs, File& base, const std::string& journal);
// kForeign unless the journal at `journal_path`, whose header is `h`,
// belongs to `base`: the binding's UUID and a generation no older than
// the binding's, or, for a file without a binding (a file system without
// xattrs, a copy that dropped it), the file name the journal records.
Status check_journal_belongs(File& base, const JournalHeader& h, const std::string& journal_path,
                             const std::string& target_name);

}  // namespace h5j
