#include "mpi_session.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "format.h"

namespace h5j {

Result<std::unique_ptr<MpiSession>> MpiSession::from_fapl(hid_t fapl, bool chosen_by_name,
                                                          const H5FD_journal_fapl_t& config, bool& initialised_mpi) {
  int running = 0, finalized = 0;
  MPI_Initialized(&running);
  MPI_Finalized(&finalized);
  if (finalized) return std::unique_ptr<MpiSession>();
  if (!running && chosen_by_name) {
    if (int rc = MPI_Init(nullptr, nullptr); rc != MPI_SUCCESS)
      return Status(Code::kIoError, "cannot initialise MPI (MPI_Init failed) for a file opened by driver name");
    initialised_mpi = true;
    running = 1;
  }
  if (!running) return std::unique_ptr<MpiSession>();
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Info info = MPI_INFO_NULL;
  H5E_BEGIN_TRY { H5Pget_mpi_params(fapl, &comm, &info); }
  H5E_END_TRY
  // H5Pget_mpi_params hands out duplicates, which are ours to free.
  if (comm == MPI_COMM_NULL && (!chosen_by_name || config.mpi_comm == H5FD_JOURNAL_MPI_COMM_SELF)) {
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    return std::unique_ptr<MpiSession>();
  }
  std::unique_ptr<MpiSession> s(new MpiSession());
  if (comm == MPI_COMM_NULL) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  s->comm_ = comm;
  s->info_ = info;
  s->timeout_ = std::chrono::seconds(config.mpi_timeout);
  MPI_Comm_set_errhandler(s->comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(s->comm_, &s->rank_);
  MPI_Comm_size(s->comm_, &s->size_);
  if (s->size_ == 1) return std::unique_ptr<MpiSession>();
  return s;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // A broken session's communicator may still have a request in flight
  // that can never complete; it is left to MPI_Finalize.
  if (finalized || !broken_) return;
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  if (info_ != MPI_INFO_NULL) MPI_Info_free(&info_);
}

Status MpiSession::mpi_error(int code, const char* step) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return broken_ = Status(Code::kIoError, std::string(step) + " failed on rank " + std::to_string(rank_) + ": " +
                                              std::string(text, size_t(len)));
}

Status MpiSession::wait(MPI_Request& request, const char* step) {
  using namespace std::chrono;
  const auto start = steady_clock::now();
  auto nap = microseconds(1);
  for (;;) {
    int done = 0;
    if (int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE); rc != MPI_SUCCESS) return mpi_error(rc, step);
    if (done) return Status::ok();
    if (timeout_.count() > 0 && steady_clock::now() - start >= timeout_)
      return broken_ = Status(Code::kIoError,
                              "rank " + std::to_string(rank_) + " waited " + std::to_string(timeout_.count()) +
                                  " s for the other ranks in " + step + " (mpi_timeout): a rank has died or " +
                                  "stopped.  The file stays at its last commit; run h5recover on it");
    // Short naps at first (a commit's steps take microseconds), then 1 ms.
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, microseconds(1000));
  }
}

Status MpiSession::broadcast_message(std::string& message, int root) {
  int len = int(message.size());
  MPI_Request request;
  if (int rc = MPI_Ibcast(&len, 1, MPI_INT, root, comm_, &request); rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Ibcast");
  H5J_RETURN_IF_ERROR(wait(request, "broadcasting an error"));
  message.resize(size_t(len));
  if (int rc = MPI_Ibcast(message.data(), len, MPI_CHAR, root, comm_, &request); rc != MPI_SUCCESS)
    return mpi_error(rc, "MPI_Ibcast");
  return wait(request, "broadcasting an error");
}

Status MpiSession::agree(const Status& local) {
  if (!broken_) return broken_;
  int code = int(local.code());
  std::vector<int> codes(size_t(size_), 0);
  MPI_Request request;
  if (int rc = MPI_Iallgather(&code, 1, MPI_INT, codes.data(), 1, MPI_INT, comm_, &request); rc != MPI_SUCCESS)
    return mpi_error(rc, "MPI_Iallgather (agreeing on an outcome)");
  H5J_RETURN_IF_ERROR(wait(request, "agreeing on an outcome"));
  int root = 0;
  while (root < size_ && codes[size_t(root)] == int(Code::kOk)) ++root;
  if (root == size_) return Status::ok();
  std::string message = rank_ == root ? local.message() : std::string();
  H5J_RETURN_IF_ERROR(broadcast_message(message, root));
  if (rank_ != root) message = "rank " + std::to_string(root) + ": " + message;
  return Status(Code(codes[size_t(root)]), message);
}

namespace {

std::vector<std::byte> encode_index(const std::vector<DataPayload>& index) {
  std::vector<std::byte> out(index.size() * kDataPayloadSize);
  for (size_t i = 0; i < index.size(); ++i)
    encode_data(index[i], std::span<std::byte, kDataPayloadSize>(out.data() + i * kDataPayloadSize, kDataPayloadSize));
  return out;
}

std::vector<DataPayload> decode_index(const std::vector<std::byte>& bytes) {
  std::vector<DataPayload> out;
  for (size_t at = 0; at + kDataPayloadSize <= bytes.size(); at += kDataPayloadSize)
    out.push_back(decode_data(std::span<const std::byte>(bytes.data() + at, kDataPayloadSize)));
  return out;
}

}  // namespace

Status MpiSession::commit(JournaledFile& file, bool closing) {
  // 1. Followers: their writes durable, their DATA records ready.
  std::vector<std::byte> mine;
  Status local;
  if (rank_ != 0) {
    auto index = file.prepare_commit();
    if (index) mine = encode_index(*index);
    else local = index.status();
  }
  // A missed deadline leaves this rank unsure of the others: it writes
  // nothing more, and the file stays at its last commit.
  auto give_up = [&] {
    (void)file.fail_stop(broken_);
    return broken_;
  };
  Status prepared = agree(local);
  if (!broken_) return give_up();
  // 2. The records to rank 0.
  std::vector<std::byte> all;
  if (prepared && !gather_to_rank0(mine, all)) return give_up();
  // 3. Rank 0 commits them with its own, or stays at the last commit.
  Status committed;
  if (rank_ == 0) {
    if (!prepared) (void)file.fail_stop(prepared);
    committed = prepared ? file.commit_with(decode_index(all), closing) : (closing ? file.close() : prepared);
  }
  Status outcome = agree(committed);
  if (!broken_) return give_up();
  // 4. Followers move on with the journal (a checkpoint starts a generation).
  Status followed;
  if (rank_ != 0) followed = closing ? file.close() : outcome ? file.finish_commit() : outcome;
  return outcome ? agree(followed) : outcome;
}

Status MpiSession::gather_to_rank0(const std::vector<std::byte>& mine, std::vector<std::byte>& all) {
  int len = int(mine.size());
  std::vector<int> lens(size_t(size_), 0), offsets(size_t(size_), 0);
  MPI_Request request;
  if (int rc = MPI_Igather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm_, &request); rc != MPI_SUCCESS)
    return mpi_error(rc, "MPI_Igather (commit)");
  H5J_RETURN_IF_ERROR(wait(request, "gathering index lengths (commit)"));
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r) offsets[size_t(r)] = offsets[size_t(r - 1)] + lens[size_t(r - 1)];
    all.resize(size_t(offsets.back() + lens.back()));
  }
  if (int rc = MPI_Igatherv(mine.data(), len, MPI_BYTE, all.data(), lens.data(), offsets.data(), MPI_BYTE, 0, comm_,
                            &request);
      rc != MPI_SUCCESS)
    return mpi_error(rc, "MPI_Igatherv (commit)");
  return wait(request, "gathering index records (commit)");
}

}  // namespace h5j
