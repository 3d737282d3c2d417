#include "mpi_session.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "format.h"

namespace h5j {

std::unique_ptr<MpiSession> MpiSession::over(MPI_Comm comm, MPI_Info info, const H5FD_journal_fapl_t& config) {
  std::unique_ptr<MpiSession> s(new MpiSession());
  s->comm_ = comm;
  // HDF5 takes MPI_INFO_NULL from a driver for an error (H5FD_mpi_get_info,
  // behind H5Fget_access_plist); mpio always has one, from MPI-IO.
  if (info == MPI_INFO_NULL) MPI_Info_create(&info);
  s->info_ = info;
  s->timeout_ = std::chrono::seconds(config.mpi_timeout);
  MPI_Comm_set_errhandler(s->comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(s->comm_, &s->rank_);
  MPI_Comm_size(s->comm_, &s->size_);
  if (s->size_ == 1) return nullptr;
  return s;
}

MpiSession::~MpiSession() {
  restore_fapl();  // an open that failed before HDF5 asked for the communicator
  int finalized = 0;
  MPI_Finalized(&finalized);
  // A broken session's communicator may still have a request in flight
  // that can never complete; it is left to MPI_Finalize.
  if (finalized || broken()) return;
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  if (info_ != MPI_INFO_NULL) MPI_Info_free(&info_);
}

Status MpiSession::mpi_error(int code, const char* step) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return fault_ = Status(Code::kIoError, std::string(step) + " failed on rank " + std::to_string(rank_) + ": " +
                                              std::string(text, size_t(len)));
}

Status MpiSession::wait(MPI_Request& request, const char* step) {
  using namespace std::chrono;
  const auto start = steady_clock::now();
  constexpr auto kSpin = microseconds(5000);
  auto nap = microseconds(50);
  for (;;) {
    int done = 0;
    if (int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE); rc != MPI_SUCCESS) return mpi_error(rc, step);
    if (done) return Status::ok();
    if (timeout_.count() > 0 && steady_clock::now() - start >= timeout_)
      return fault_ = Status(Code::kIoError,
                              "rank " + std::to_string(rank_) + " waited " + std::to_string(timeout_.count()) +
                                  " s for the other ranks in " + step + " (mpi_timeout): a rank has died or " +
                                  "stopped.  The file stays at its last commit; run h5recover on it");
    // A commit's steps take microseconds, and a sleep however short costs
    // the timer's slack (about 80 us measured here, against 4 us for the
    // whole exchange): so the first kSpin only yields the core, which a
    // rank sharing it needs, and only then naps grow to 1 ms.
    if (steady_clock::now() - start < kSpin) {
      std::this_thread::yield();
      continue;
    }
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

Status MpiSession::agree(const Status& local, int* rank0_value) {
  if (broken()) return fault_;
  int mine[2] = {int(local.code()), rank0_value != nullptr ? *rank0_value : 0};
  std::vector<int> every(2 * size_t(size_), 0);
  MPI_Request request;
  if (int rc = MPI_Iallgather(mine, 2, MPI_INT, every.data(), 2, MPI_INT, comm_, &request); rc != MPI_SUCCESS)
    return mpi_error(rc, "MPI_Iallgather (agreeing on an outcome)");
  H5J_RETURN_IF_ERROR(wait(request, "agreeing on an outcome"));
  if (rank0_value != nullptr) *rank0_value = every[1];
  auto code = [&](int r) { return every[2 * size_t(r)]; };
  int root = 0;
  while (root < size_ && code(root) == int(Code::kOk)) ++root;
  if (root == size_) return Status::ok();
  std::string message = rank_ == root ? local.message() : std::string();
  H5J_RETURN_IF_ERROR(broadcast_message(message, root));
  if (rank_ != root) message = "rank " + std::to_string(root) + ": " + message;
  return Status(Code(code(root)), message);
}

// Each rank's sizes in one gather, then its records, in their format.h
// encoding: DATA records, then INPLACE records (named, then synced).
Status MpiSession::gather_index(const PreparedIndex& mine, PreparedIndex& all) {
  if (broken()) return fault_;
  std::vector<std::byte> bytes(mine.records.size() * kDataPayloadSize +
                               (mine.in_place.size() + mine.in_place_synced.size()) * kInPlacePayloadSize);
  std::byte* at = bytes.data();
  for (const DataPayload& d : mine.records) {
    encode_data(d, std::span<std::byte, kDataPayloadSize>(at, kDataPayloadSize));
    at += kDataPayloadSize;
  }
  for (const auto* list : {&mine.in_place, &mine.in_place_synced})
    for (const InPlacePayload& p : *list) {
      encode_in_place(p, std::span<std::byte, kInPlacePayloadSize>(at, kInPlacePayloadSize));
      at += kInPlacePayloadSize;
    }
  constexpr size_t kSizes = 6;
  uint64_t sizes[kSizes] = {mine.records.size(), mine.in_place.size(), mine.in_place_synced.size(),
                            mine.log_bytes,      mine.durable_through, uint64_t(mine.in_place_unknown)};
  std::vector<uint64_t> every(kSizes * size_t(size_), 0);
  std::vector<int> lens(size_t(size_), 0), offsets(size_t(size_), 0);
  MPI_Request request;
  if (int rc = MPI_Igather(sizes, kSizes, MPI_UINT64_T, every.data(), kSizes, MPI_UINT64_T, 0, comm_, &request);
      rc != MPI_SUCCESS)
    return mpi_error(rc, "MPI_Igather (commit)");
  H5J_RETURN_IF_ERROR(wait(request, "gathering index lengths (commit)"));
  auto size_of = [&](int r, size_t k) { return every[kSizes * size_t(r) + k]; };
  std::vector<std::byte> gathered;
  if (rank_ == 0) {
    for (int r = 0; r < size_; ++r) {
      lens[size_t(r)] = int(size_of(r, 0) * kDataPayloadSize + (size_of(r, 1) + size_of(r, 2)) * kInPlacePayloadSize);
      if (r > 0) offsets[size_t(r)] = offsets[size_t(r - 1)] + lens[size_t(r - 1)];
    }
    gathered.resize(size_t(offsets.back() + lens.back()));
  }
  if (int rc = MPI_Igatherv(bytes.data(), int(bytes.size()), MPI_BYTE, gathered.data(), lens.data(), offsets.data(),
                            MPI_BYTE, 0, comm_, &request);
      rc != MPI_SUCCESS)
    return mpi_error(rc, "MPI_Igatherv (commit)");
  H5J_RETURN_IF_ERROR(wait(request, "gathering index records (commit)"));
  if (rank_ != 0) return Status::ok();
  for (int r = 0; r < size_; ++r) {
    PreparedIndex theirs;
    const std::byte* from = gathered.data() + offsets[size_t(r)];
    for (uint64_t i = 0; i < size_of(r, 0); ++i, from += kDataPayloadSize)
      theirs.records.push_back(decode_data(std::span<const std::byte>(from, kDataPayloadSize)));
    for (auto [list, n] : {std::pair{&theirs.in_place, size_of(r, 1)}, std::pair{&theirs.in_place_synced, size_of(r, 2)}})
      for (uint64_t i = 0; i < n; ++i, from += kInPlacePayloadSize)
        list->push_back(decode_in_place(std::span<const std::byte, kInPlacePayloadSize>(from, kInPlacePayloadSize)));
    theirs.log_bytes = size_of(r, 3);
    theirs.durable_through = size_of(r, 4);
    theirs.in_place_unknown = size_of(r, 5) != 0;
    all.add(theirs);
  }
  return Status::ok();
}

}  // namespace h5j
