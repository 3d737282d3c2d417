// The particle patterns of h5bench's write kernel (h5bench_write, after
// VPIC-IO), written with this project's own code: per timestep, a group
// Timestep_T holding `particles` particles of 8 variables, six floats (x,
// y, z, px, py, pz) and two ints (id_1, id_2), laid out in one of five ways:
//   CC  contiguous in memory and in the file: a dataset per variable,
//       written whole, of 1, 2 or 3 dimensions (particles in all)
//   CI  contiguous in memory, interleaved in the file: one compound dataset
//       of 32-byte particles, written a variable at a time
//   IC  interleaved in memory (an array of particles), contiguous in the
//       file: a dataset per variable, gathered from the array
//   II  interleaved in both: the array into the compound dataset at once
//   CS  contiguous in memory, strided in the file: a variable's values one
//       every `stride` elements of a dataset `stride` times longer (4: a
//       value every 16 bytes)
// h5bench flushes once, at the close, after its last timestep; so does
// the benchmark (h5journal_bench particles).
#pragma once

#include <hdf5.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace bench {

struct ParticlePattern {
  std::string layout = "CC";
  int dims = 1;                      // CC only: 1, 2 or 3
  hsize_t particles = hsize_t(1) << 18;  // a multiple of 4096
  int timesteps = 8;
  hsize_t stride = 4;                // CS only
  // --layout, --dims, --particles, --timesteps and --stride on `sub`.
  void add_options(CLI::App& sub);
};

// Writes every timestep into `file`; returns the bytes of particle data.
uint64_t write_particles(hid_t file, const ParticlePattern& p);

}  // namespace bench
