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
    auto prepared = file.step1_follower_prepare(closing);
    if (prepared) mine = std::move(*prepared);
    else local = prepared.status();
  }
  (void)ranks.gather_index(mine, all);
  if (ranks.broken()) return give_up();
  int heard = 0;
  if (owner) {
    auto said = file.step1_owner_hear(all, closing);
    if (said) heard = said->encode();
    else local = said.status();
  }
  Status prepared = ranks.agree(local, &heard);
  if (ranks.broken()) return give_up();
  if (prepared && OwnerWord::decode(heard).sync_now) {
    prepared = ranks.agree(owner ? Status::ok() : file.step1_follower_sync(), nullptr);
    if (ranks.broken()) return give_up();
  }

  // 2.
  Status committed;
  int word = 0;
  if (owner && !prepared) {
    (void)file.fail_stop(prepared);
    committed = closing ? file.close() : prepared;
  } else if (owner) {
    auto said = file.step2_owner_commit(all, closing);
    if (said) word = said->encode();
    else committed = said.status();
  }
  Status outcome = ranks.agree(committed, &word);
  if (ranks.broken()) return give_up();
  if (!outcome) {
    if (closing && !owner) (void)file.close();
    return JournaledFile::commit_failed(outcome);
  }
  const OwnerWord said = OwnerWord::decode(word);
  if (!owner) file.step2_follower_hear(said);
  // The COMMIT is made: an error from here on says so, as a serial
  // commit's does (JournaledFile::failed_after_commit), and stops the file
  // at this commit.
  const char* rewrite = closing ? "the close after it" : "the checkpoint after it";
  auto made_then = [&](const Status& why, const std::string& what) {
    return file.failed_after_commit(ranks.broken() ? give_up() : file.fail_stop(why), what);
  };

  // 3. and 4.
  if (said.rewrite) {
    Status shared = owner ? Status::ok() : file.step3_follower_follow();
    if (shared) shared = file.step4_write_raw_share();
    shared = ranks.agree(shared, nullptr);
    if (ranks.broken() || !shared) return made_then(shared, rewrite);
  } else if (!closing) {
    Status followed = ranks.agree(owner ? Status::ok() : file.step3_follower_follow(), nullptr);
    return ranks.broken() || !followed ? made_then(followed, "following it on every rank") : followed;
  }

  // 5.
  Status ended = ranks.agree(owner ? file.step5_owner_materialize(said.rewrite, closing) : Status::ok(), nullptr);
  if (ranks.broken() || !ended) return made_then(ended, rewrite);
  Status last = ranks.agree(owner ? Status::ok() : closing ? file.close() : file.step3_follower_follow(), nullptr);
  return ranks.broken() || !last ? made_then(last, closing ? rewrite : "following it on every rank") : last;
}

Status collective_wait_durable(JournaledFile& file, RankExchange& ranks) {
  const bool owner = ranks.rank() == 0;
  // Every follower's writes durable, then rank 0's file and journal: its
  // sync then makes durable every commit so far, on every rank.
  Status synced = ranks.agree(owner ? Status::ok() : file.wait_durable(), nullptr);
  if (ranks.broken()) return file.fail_stop(ranks.fault());
  if (!synced) return synced;
  Status waited = ranks.agree(owner ? file.wait_durable_after_followers() : Status::ok(), nullptr);
  return ranks.broken() ? file.fail_stop(ranks.fault()) : waited;
}

}  // namespace h5j
