// Fuzz target: the journal reader, header parser and transaction grammar,
// and building a replay plan, on arbitrary bytes.  They may only report an
// error or return the committed prefix: never crash, hang, read out of
// bounds or allocate without limit.
#include "fuzz_input.h"
#include "journal_reader.h"
#include "mem_fs.h"
#include "replay.h"

using namespace h5j;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  explorer::Image image;
  image["j.jnl"].data = fuzz::journal_from(data, size);
  explorer::MemFileSystem fs(image);
  auto file = fs.open("j.jnl", OpenMode::kReadOnly, IoEngine::kSync);
  if (!file) return 0;
  auto reader = JournalReader::open(**file);
  if (!reader) return 0;
  auto plan = plan_replay(**reader, RecoveryMode(size > 1 ? data[1] % 4 : 0));
  if (plan) {
    // Every planned extent lies inside the journal it came from.
    plan->overlay.for_each([&](const ExtentMap::Extent& e) {
      if (e.src != ExtentMap::kZeroSource && e.src + e.len > image["j.jnl"].data.size()) __builtin_trap();
    });
  }
  return 0;
}
