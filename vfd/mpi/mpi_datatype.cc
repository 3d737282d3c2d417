#include "mpi_datatype.h"

#include <hdf5.h>

#include <algorithm>
#include <string>

#include "hdf5_private.h"

namespace h5j {
namespace {

struct Block {
  int64_t offset;
  int64_t length;
};

// A datatype's type map as byte blocks, in type-map order (which for a
// file type MPI requires to be ascending), and its extent.
struct TypeMap {
  std::vector<Block> blocks;
  int64_t extent = 0;

  int64_t size() const {
    int64_t n = 0;
    for (const Block& b : blocks) n += b.length;
    return n;
  }
  // One block from 0 to the extent: copies side by side are one block.
  bool dense() const { return blocks.size() == 1 && blocks[0].offset == 0 && blocks[0].length == extent; }
};

void append(std::vector<Block>& out, int64_t offset, int64_t length) {
  if (length == 0) return;
  if (!out.empty() && out.back().offset + out.back().length == offset) out.back().length += length;
  else out.push_back({offset, length});
}

// `count` copies of `map`, the first at `at`, each `stride` bytes after the last.
void append_copies(std::vector<Block>& out, const TypeMap& map, int64_t at, int64_t count, int64_t stride) {
  if (map.dense() && stride == map.extent) return append(out, at, count * map.extent);
  for (int64_t i = 0; i < count; ++i)
    for (const Block& b : map.blocks) append(out, at + i * stride + b.offset, b.length);
}

Status unsupported(int combiner) {
  return Status(Code::kInvalid, "collective I/O with an MPI datatype this driver cannot read (combiner " +
                                    std::to_string(combiner) + ")");
}

Result<TypeMap> type_map(MPI_Datatype type);

// The arguments a datatype was constructed with (MPI_Type_get_contents),
// owning the derived datatypes among them, which the caller must free.
struct Contents {
  std::vector<int> ints;
  std::vector<MPI_Aint> addresses;
  std::vector<MPI_Datatype> types;
  std::vector<TypeMap> maps;  // of `types`

  Contents() = default;
  Contents(const Contents&) = delete;
  Contents& operator=(const Contents&) = delete;
  ~Contents() {
    for (MPI_Datatype& t : types) {
      int n = 0, a = 0, d = 0, combiner = 0;
      MPI_Type_get_envelope(t, &n, &a, &d, &combiner);
      if (combiner != MPI_COMBINER_NAMED) MPI_Type_free(&t);
    }
  }
};

Status read_contents(MPI_Datatype type, int n_ints, int n_addresses, int n_types, Contents& c) {
  c.ints.resize(size_t(n_ints));
  c.addresses.resize(size_t(n_addresses));
  c.types.resize(size_t(n_types));
  MPI_Type_get_contents(type, n_ints, n_addresses, n_types, c.ints.data(), c.addresses.data(), c.types.data());
  for (MPI_Datatype t : c.types) {
    auto map = type_map(t);
    if (!map) return map.status();
    c.maps.push_back(std::move(*map));
  }
  return Status::ok();
}

// The blocks of each constructor, from its arguments.  `old` is the one
// inner type's map; element displacements are in units of its extent.
std::vector<Block> constructed_blocks(int combiner, const Contents& c) {
  std::vector<Block> out;
  const TypeMap& old = c.maps.front();
  const int* in = c.ints.data();
  const MPI_Aint* ad = c.addresses.data();
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:  // the same type map; the new extent is read from the type itself
      return old.blocks;
    case MPI_COMBINER_CONTIGUOUS:
      append_copies(out, old, 0, in[0], old.extent);
      break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      int64_t stride = combiner == MPI_COMBINER_VECTOR ? int64_t(in[2]) * old.extent : int64_t(ad[0]);
      for (int i = 0; i < in[0]; ++i) append_copies(out, old, i * stride, in[1], old.extent);
      break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
      for (int i = 0; i < in[0]; ++i) {
        int64_t at = combiner == MPI_COMBINER_INDEXED ? int64_t(in[1 + in[0] + i]) * old.extent : int64_t(ad[i]);
        append_copies(out, old, at, in[1 + i], old.extent);
      }
      break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
      for (int i = 0; i < in[0]; ++i) {
        int64_t at = combiner == MPI_COMBINER_INDEXED_BLOCK ? int64_t(in[2 + i]) * old.extent : int64_t(ad[i]);
        append_copies(out, old, at, in[1], old.extent);
      }
      break;
    case MPI_COMBINER_STRUCT:
      for (int i = 0; i < in[0]; ++i) append_copies(out, c.maps[size_t(i)], ad[i], in[1 + i], c.maps[size_t(i)].extent);
      break;
  }
  return out;
}

bool understood(int combiner) {
  switch (combiner) {
    case MPI_COMBINER_DUP: case MPI_COMBINER_RESIZED: case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR: case MPI_COMBINER_HVECTOR: case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: case MPI_COMBINER_INDEXED_BLOCK: case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT:
      return true;
  }
  return false;
}

Result<TypeMap> type_map(MPI_Datatype type) {
  TypeMap map;
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  map.extent = extent;
  int n_ints = 0, n_addresses = 0, n_types = 0, combiner = 0;
  MPI_Type_get_envelope(type, &n_ints, &n_addresses, &n_types, &combiner);
  if (combiner == MPI_COMBINER_NAMED) {
    int size = 0;
    MPI_Type_size(type, &size);
    if (size != extent) return unsupported(combiner);  // a pair type such as MPI_DOUBLE_INT has a hole
    append(map.blocks, 0, size);
    return map;
  }
  if (!understood(combiner)) return unsupported(combiner);
  Contents contents;
  H5J_RETURN_IF_ERROR(read_contents(type, n_ints, n_addresses, n_types, contents));
  map.blocks = constructed_blocks(combiner, contents);
  return map;
}

// The first `bytes` bytes of the stream of copies of `map` from `at`.
std::vector<Block> stream(const TypeMap& map, int64_t at, int64_t bytes) {
  int64_t per_copy = map.size();
  std::vector<Block> out;
  if (per_copy == 0) return out;
  append_copies(out, map, at, (bytes + per_copy - 1) / per_copy, map.extent);
  int64_t total = 0;
  for (auto it = out.begin(); it != out.end(); ++it) {
    if (total + it->length >= bytes) {
      it->length = bytes - total;
      out.erase(it + 1, out.end());
      break;
    }
    total += it->length;
  }
  return out;
}

}  // namespace

bool collective_mode_in_context() {
  H5FD_mpio_xfer_t mode = H5FD_MPIO_INDEPENDENT;
  return H5CX_get_io_xfer_mode(&mode) >= 0 && mode == H5FD_MPIO_COLLECTIVE;
}

bool collective_call_in_context() {
  H5FD_mpio_collective_opt_t option = H5FD_MPIO_INDIVIDUAL_IO;
  return collective_mode_in_context() && H5CX_get_mpio_coll_opt(&option) >= 0 && option == H5FD_MPIO_COLLECTIVE_IO;
}

bool collective_types_in_context(CollectiveTypes& out) {
  if (!collective_mode_in_context()) return false;
  if (H5CX_get_mpi_coll_datatypes(&out.buf_type, &out.file_type) < 0) return false;
  return !(out.buf_type == MPI_BYTE && out.file_type == MPI_BYTE);
}

Result<std::vector<CollectivePiece>> collective_pieces(uint64_t addr, size_t count, const CollectiveTypes& types) {
  auto memory_map = type_map(types.buf_type);
  if (!memory_map) return memory_map.status();
  auto file_map = type_map(types.file_type);
  if (!file_map) return file_map.status();
  int64_t bytes = int64_t(count) * memory_map->size();
  if (bytes > 0 && file_map->size() == 0)
    return Status(Code::kInvalid, "collective I/O whose file type selects no bytes");
  std::vector<Block> memory = stream(*memory_map, 0, bytes);
  std::vector<Block> file = stream(*file_map, int64_t(addr), bytes);
  // Pair the two streams: each piece ends where a block of either ends.
  std::vector<CollectivePiece> pieces;
  size_t m = 0, f = 0;
  int64_t m_used = 0, f_used = 0;
  while (m < memory.size() && f < file.size()) {
    int64_t length = std::min(memory[m].length - m_used, file[f].length - f_used);
    if (memory[m].offset + m_used < 0) return Status(Code::kInvalid, "collective I/O before the start of the buffer");
    pieces.push_back({uint64_t(file[f].offset + f_used), uint64_t(memory[m].offset + m_used), uint64_t(length)});
    m_used += length;
    f_used += length;
    if (m_used == memory[m].length) ++m, m_used = 0;
    if (f_used == file[f].length) ++f, f_used = 0;
  }
  return pieces;
}

}  // namespace h5j
