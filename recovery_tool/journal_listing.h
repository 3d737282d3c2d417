// h5recover --list: what a journal or data log holds, record by record, as
// LevelDB's `leveldbutil dump` shows a log.  Users read it after a crash;
// the tests read it instead of parsing journals by hand.
//
// The output, one line each (columns separated by spaces, "-" for none):
//   journal PATH: N bytes, format version V       (or: data log PATH: ...)
//   slot I at OFFSET: generation G [in use] | empty | invalid (why)
//   header: generation G, uuid U, salt S, first transaction T, created C,
//           base size B, target "NAME"
//   fingerprint: S sample(s)                       (format version 5 on)
//   commits aligned to B bytes [(written with durable=false) | , or packed until a sync seals them (durable=100ms)]
//   OFFSET TYPE TXN ADDRESS LENGTH BYTES_AT CRC [NOTE]
//     TYPE is BEGIN, WRITE, COMMIT, COMMENT, ZERO, DATA, PLACED or INPLACE;
//     ADDRESS and LENGTH the file range a record covers; BYTES_AT where its
//     bytes are: a journal offset for WRITE, LOG:OFFSET for DATA.  An
//     INPLACE line's NOTE is "in the file, masked CRC32C X".  CRC is ok for a
//     record that validates, and bad on a DAMAGED line: the stream broke
//     there (NOTE says why), and listing resumes at the next valid record.
//   end: WHY at offset OFFSET
//   summary: C committed transaction(s) [FIRST..LAST], R record(s) after the
//            last commit, records end at OFFSET
//   (for a data log: summary: R record(s), records end at OFFSET)
#pragma once

#include <cstdio>
#include <string>

#include "status.h"

namespace h5j {

// Lists the journal (or, with `data_log`, the data log) at `path` on
// `out`.  Errors: the file cannot be read, or neither header slot is valid.
Status list_journal(const std::string& path, bool data_log, std::FILE* out);

}  // namespace h5j
