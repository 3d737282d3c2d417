// What the driver asks of MPI (rank_group.h), built against a parallel
// HDF5: which files are opened by a group of ranks, HDF5's collective
// layout of a raw transfer, and the MPI queries HDF5 makes of a driver
// with H5FD_FEAT_HAS_MPI.
#include <H5FDdevelop.h>

#include <cstring>
#include <functional>
#include <string>

#include "hdf5_private.h"
#include "mpi_datatype.h"
#include "mpi_session.h"

namespace h5j {
namespace {

constexpr const char* kMdcConfigProperty = "mdc_initCacheCfg";  // H5F_ACS_META_CACHE_INIT_CONFIG_NAME

H5P_genplist_t* property_list(hid_t id) { return static_cast<H5P_genplist_t*>(H5I_object(id)); }

// The FAPL's communicator, or MPI_COMM_NULL: H5Pget_mpi_params hands out
// duplicates, which are the caller's to free.
void communicator_of(hid_t fapl, MPI_Comm& comm, MPI_Info& info) {
  comm = MPI_COMM_NULL;
  info = MPI_INFO_NULL;
  H5E_BEGIN_TRY { H5Pget_mpi_params(fapl, &comm, &info); }
  H5E_END_TRY
}

// The durability a rank's configuration asks for, as configuration.md
// spells it.
std::string durability_of(const H5FD_journal_fapl_t& c) {
  if (!c.durable) return "durable=false";
  if (c.durable_within_ms == 0) return "durable=true";
  return "durable=" + std::to_string(c.durable_within_ms) + "ms";
}

}  // namespace

Result<std::unique_ptr<RankGroup>> rank_group_for(const std::string& name, hid_t fapl, bool chosen_by_name,
                                                  const H5FD_journal_fapl_t& config) {
  // MPI is the application's: a serial program (h5dump under
  // HDF5_DRIVER=journal) never pays for MPI_Init.
  int running = 0, finalized = 0;
  MPI_Initialized(&running);
  MPI_Finalized(&finalized);
  if (!running || finalized) return std::unique_ptr<RankGroup>();
  MPI_Comm comm;
  MPI_Info info;
  communicator_of(fapl, comm, info);
  // Chosen by name with no communicator on the FAPL (an H5P_DEFAULT open),
  // each process opens its own file unless mpi_comm=world: an MPI program
  // that shares one file sets mpio or a communicator itself.
  bool world = chosen_by_name && config.mpi_comm == H5FD_JOURNAL_MPI_COMM_WORLD;
  if (comm == MPI_COMM_NULL && !world) {
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    return std::unique_ptr<RankGroup>();
  }
  if (comm == MPI_COMM_NULL) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::unique_ptr<MpiSession> session = MpiSession::over(comm, info, config);
  if (!session) return std::unique_ptr<RankGroup>();
  H5J_RETURN_IF_ERROR(session->check_same_file(name));
  H5J_RETURN_IF_ERROR(session->check_same_durability(durability_of(config)));
  H5J_RETURN_IF_ERROR(session->write_metadata_from_rank0_only(fapl));
  return std::unique_ptr<RankGroup>(std::move(session));
}

Result<std::vector<CollectivePiece>> MpiSession::transfer_pieces(uint64_t addr, size_t size) {
  CollectiveTypes types;
  if (!collective_types_in_context(types)) return std::vector<CollectivePiece>();
  return collective_pieces(addr, size, types);
}

// HDF5 fills new chunks with one raw write in collective mode (each rank its
// share, then an MPI_Barrier) and writes their data with the next, perhaps
// from another rank; the fill must land first.  So every raw write in
// collective mode ends with this rank's staged bytes in place.  One HDF5
// declared a collective call also ends together on every rank, as mpio's
// MPI_File_write_at_all does, with one outcome: rank 0's fill of a chunk,
// journaled, must not land after another rank's data for it.  Not with
// H5FD_MPIO_INDIVIDUAL_IO, whose calls not every rank makes.  Metadata
// writes never are collective: under PROCESS_0_ONLY rank 0 alone writes
// them, inside whatever call made the metadata cache flush.
Status MpiSession::end_raw_write(JournaledFile& file, const Status& local) {
  if (!collective_mode_in_context()) return local;
  Status placed = local ? file.place_staged() : local;
  return collective_call_in_context() ? agree(placed) : placed;
}

// As mpio answers them (H5FDmpio.c).  HDF5 asks for the communicator as it
// builds the file's metadata cache, after it read the cache's configuration
// from the FAPL: the FAPL can have its value back.
bool MpiSession::answer_ctl(uint64_t op, void** output) {
  restore_fapl();
  if (output == nullptr || *output == nullptr) return false;
  switch (op) {
    case H5FD_CTL_GET_MPI_COMMUNICATOR_OPCODE: **reinterpret_cast<MPI_Comm**>(output) = comm_; return true;
    case H5FD_CTL_GET_MPI_INFO_OPCODE: **reinterpret_cast<MPI_Info**>(output) = info_; return true;
    case H5FD_CTL_GET_MPI_RANK_OPCODE: **reinterpret_cast<int**>(output) = rank_; return true;
    case H5FD_CTL_GET_MPI_SIZE_OPCODE: **reinterpret_cast<int**>(output) = size_; return true;
    default: return false;
  }
}

Status MpiSession::same_as_rank0(const std::string& mine, const std::function<std::string(const std::string&)>& why) {
  std::string rank0s = mine;
  Status s = broadcast_message(rank0s, 0);
  if (s && rank0s != mine) s = Status(Code::kInvalid, "rank " + std::to_string(rank_) + " " + why(rank0s));
  return agree(s);
}

Status MpiSession::check_same_file(const std::string& name) {
  return same_as_rank0(name, [&](const std::string& rank0s) {
    return "opens \"" + name + "\" while rank 0 opens \"" + rank0s +
           "\": with mpi_comm=world every rank must open the same file " +
           "(mpi_comm=self, the default, gives each process a file of its own)";
  });
}

// A commit is as durable as its least durable rank's writes: a rank that
// syncs less than rank 0 believes would leave, after a power loss, a
// commit whose bytes never reached the disk.
Status MpiSession::check_same_durability(const std::string& durability) {
  return same_as_rank0(durability, [&](const std::string& rank0s) {
    return "opens the file with " + durability + " while rank 0 uses " + rank0s +
           ": every rank of a job must use the same durability";
  });
}

// Under MPI, metadata is written by rank 0 alone (PROCESS_0_ONLY): its
// journal records are then the only metadata, and the other ranks read
// them from the journal (docs/design.md §10).  HDF5 reads the strategy
// from the FAPL right after the driver's open returns (H5F__new), so, as
// the subfiling driver does, open sets it there.  Unlike subfiling, the
// driver gives the FAPL its own value back as soon as HDF5 has read it
// (answer_ctl: HDF5 asks for the communicator as it builds the file's
// metadata cache), or when the open fails (the destructor).  So no FAPL is
// changed for any later file: not the application's, and not HDF5's
// default one, which an H5P_DEFAULT open hands the driver and which the
// public H5Pset_mdc_config refuses to change in HDF5 2.x.
Status MpiSession::write_metadata_from_rank0_only(hid_t fapl) {
  H5P_genplist_t* list = property_list(fapl);
  H5AC_cache_config_t config;
  std::memset(&config, 0, sizeof config);
  config.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  if (list == nullptr || H5P_get(list, kMdcConfigProperty, &config) < 0)
    return Status(Code::kInvalid, "cannot read the metadata cache configuration of the FAPL");
  if (!restore_fapl_) {
    fapl_ = fapl;
    fapl_mdc_config_ = config;
    restore_fapl_ = true;
  }
  config.metadata_write_strategy = H5AC_METADATA_WRITE_STRATEGY__PROCESS_0_ONLY;
  if (H5P_set(list, kMdcConfigProperty, &config) < 0)
    return Status(Code::kInvalid, "cannot set the metadata write strategy PROCESS_0_ONLY on the FAPL");
  return Status::ok();
}

void MpiSession::restore_fapl() {
  if (!restore_fapl_) return;
  restore_fapl_ = false;
  // The application may have closed its FAPL by now (no list then).
  H5P_genplist_t* list = nullptr;
  H5E_BEGIN_TRY { list = property_list(fapl_); }
  H5E_END_TRY
  if (list != nullptr) (void)H5P_set(list, kMdcConfigProperty, &fapl_mdc_config_);
}

}  // namespace h5j
