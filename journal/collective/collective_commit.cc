#include "collective_commit.h"

#include "journaled_file.h"

namespace h5j {

Status collective_commit(JournaledFile& file, RankExchange& ranks, bool closing) {
  const bool owner = ranks.rank() == 0;
  // A broken exchange leaves this rank unsure of the others: it writes
  // nothing more, and the file stays at its last commit.
  auto give_up = [&] { return file.fail_stop(ranks.fault()); };

  // 1.
  PreparedIndex mine, all;
  Status local;
  if (!owner) {
    auto prepared = file.step1_follower_prepare();
    if (prepared) mine = std::move(*prepared);
    else local = prepared.status();
  }
  Status prepared = ranks.agree(local, nullptr);
  if (prepared) (void)ranks.gather_index(mine, all);
  if (ranks.broken()) return give_up();

  // 2.
  Status committed;
  int materialize = 0;
  if (owner && !prepared) {
    (void)file.fail_stop(prepared);
    committed = closing ? file.close() : prepared;
  } else if (owner) {
    auto due = file.step2_owner_commit(all, closing);
    if (due) materialize = *due;
    else committed = due.status();
  }
  Status outcome = ranks.agree(committed, &materialize);
  if (ranks.broken()) return give_up();
  if (!outcome) {
    if (closing && !owner) (void)file.close();
    return outcome;
  }

  // 3. and 4.
  if (materialize) {
    Status shared = owner ? Status::ok() : file.step3_follower_follow();
    if (shared) shared = file.step4_write_raw_share();
    shared = ranks.agree(shared, nullptr);
    if (ranks.broken()) return give_up();
    if (!shared) return file.fail_stop(shared);
  } else if (!closing) {
    Status followed = ranks.agree(owner ? Status::ok() : file.step3_follower_follow(), nullptr);
    return ranks.broken() ? give_up() : followed;
  }

  // 5.
  Status ended = ranks.agree(owner ? file.step5_owner_materialize(bool(materialize), closing) : Status::ok(), nullptr);
  if (ranks.broken()) return give_up();
  if (!ended) return file.fail_stop(ended);
  Status last = ranks.agree(owner ? Status::ok() : closing ? file.close() : file.step3_follower_follow(), nullptr);
  return ranks.broken() ? give_up() : last;
}

}  // namespace h5j
