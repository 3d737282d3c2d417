#include "mpi_session.h"

#include <string>
#include <vector>

#include "format.h"

namespace h5j {

Result<std::unique_ptr<MpiSession>> MpiSession::from_fapl(hid_t fapl, bool chosen_by_name) {
  int running = 0, finalized = 0;
  MPI_Initialized(&running);
  MPI_Finalized(&finalized);
  if (!running || finalized) return std::unique_ptr<MpiSession>();
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Info info = MPI_INFO_NULL;
  H5E_BEGIN_TRY { H5Pget_mpi_params(fapl, &comm, &info); }
  H5E_END_TRY
  // H5Pget_mpi_params hands out duplicates, which are ours to free.
  if (comm == MPI_COMM_NULL && !chosen_by_name) return std::unique_ptr<MpiSession>();
  std::unique_ptr<MpiSession> s(new MpiSession());
  if (comm == MPI_COMM_NULL) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  s->comm_ = comm;
  s->info_ = info;
  MPI_Comm_set_errhandler(s->comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(s->comm_, &s->rank_);
  MPI_Comm_size(s->comm_, &s->size_);
  if (s->size_ == 1) return std::unique_ptr<MpiSession>();
  return s;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  if (info_ != MPI_INFO_NULL) MPI_Info_free(&info_);
}

Status MpiSession::mpi_error(int code, const char* what) const {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return Status(Code::kIoError, std::string(what) + " failed on rank " + std::to_string(rank_) + ": " +
                                    std::string(text, size_t(len)));
}

Status MpiSession::agree(const Status& local) const {
  int code = int(local.code());
  std::vector<int> codes(size_t(size_), 0);
  if (int rc = MPI_Allgather(&code, 1, MPI_INT, codes.data(), 1, MPI_INT, comm_); rc != MPI_SUCCESS)
    return mpi_error(rc, "MPI_Allgather (agreeing on an outcome)");
  int root = 0;
  while (root < size_ && codes[size_t(root)] == int(Code::kOk)) ++root;
  if (root == size_) return Status::ok();
  std::string message = rank_ == root ? local.message() : std::string();
  int len = int(message.size());
  MPI_Bcast(&len, 1, MPI_INT, root, comm_);
  message.resize(size_t(len));
  MPI_Bcast(message.data(), len, MPI_CHAR, root, comm_);
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

Status MpiSession::commit(JournaledFile& file, bool closing) const {
  // 1. Followers: their writes durable, their DATA records ready.
  std::vector<std::byte> mine;
  Status local;
  if (rank_ != 0) {
    auto index = file.prepare_commit();
    if (index) mine = encode_index(*index);
    else local = index.status();
  }
  Status prepared = agree(local);
  // 2. The records to rank 0.
  int len = int(mine.size());
  std::vector<int> lens(size_t(size_), 0), offsets(size_t(size_), 0);
  if (int rc = MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm_); rc != MPI_SUCCESS)
    return mpi_error(rc, "MPI_Gather (commit)");
  std::vector<std::byte> all;
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r) offsets[size_t(r)] = offsets[size_t(r - 1)] + lens[size_t(r - 1)];
    all.resize(size_t(offsets.back() + lens.back()));
  }
  if (int rc = MPI_Gatherv(mine.data(), len, MPI_BYTE, all.data(), lens.data(), offsets.data(), MPI_BYTE, 0, comm_);
      rc != MPI_SUCCESS)
    return mpi_error(rc, "MPI_Gatherv (commit)");
  // 3. Rank 0 commits them with its own, or stays at the last commit.
  Status committed;
  if (rank_ == 0) {
    if (!prepared) (void)file.fail_stop(prepared);
    committed = prepared ? file.commit_with(decode_index(all), closing) : (closing ? file.close() : prepared);
  }
  Status outcome = agree(committed);
  // 4. Followers move on with the journal (a checkpoint starts a generation).
  Status followed;
  if (rank_ != 0) followed = closing ? file.close() : outcome ? file.finish_commit() : outcome;
  return outcome ? agree(followed) : outcome;
}

}  // namespace h5j
