#include "particles.h"

#include <array>
#include <cstring>
#include <vector>

#include "workloads.h"

namespace bench {
namespace {

constexpr int kVariables = 8;
constexpr std::array<const char*, kVariables> kNames = {"x", "y", "z", "px", "py", "pz", "id_1", "id_2"};
bool is_int(int v) { return v >= 6; }
hid_t memory_type(int v) { return is_int(v) ? H5T_NATIVE_INT : H5T_NATIVE_FLOAT; }

// A particle as the interleaved layouts hold it: 32 bytes.
struct Particle {
  float x, y, z, px, py, pz;
  int id_1, id_2;
};
static_assert(sizeof(Particle) == kVariables * 4);

// The compound type of a particle: all 8 variables, or only variable `only`
// (at offset 0 of a 4-byte record: CI's memory type for one variable).
hid_t particle_type(int only = -1) {
  hid_t t = check_id(H5Tcreate(H5T_COMPOUND, only < 0 ? sizeof(Particle) : 4), "H5Tcreate");
  for (int v = 0; v < kVariables; ++v)
    if (only < 0 || v == only) check(H5Tinsert(t, kNames[size_t(v)], only < 0 ? size_t(v) * 4 : 0, memory_type(v)), "H5Tinsert");
  return t;
}

std::vector<hsize_t> shape(const ParticlePattern& p) {
  if (p.layout != "CC" || p.dims == 1) return {p.particles};
  if (p.dims == 2) return {p.particles / 256, 256};
  return {p.particles / 4096, 64, 64};
}

void write_whole(hid_t ds, hid_t type, hid_t memspace, const void* buf) {
  check(H5Dwrite(ds, type, memspace, H5S_ALL, H5P_DEFAULT, buf), "H5Dwrite");
}

// A dataset of `dims` in `group`, of variable v's type (or a particle's).
hid_t variable_dataset(hid_t group, const char* name, hid_t type, const std::vector<hsize_t>& dims) {
  hid_t space = check_id(H5Screate_simple(int(dims.size()), dims.data(), nullptr), "H5Screate_simple");
  hid_t ds = check_id(H5Dcreate2(group, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "H5Dcreate2");
  H5Sclose(space);
  return ds;
}

// CS: the n values one every `stride` elements of a dataset stride * n long.
void write_strided(hid_t group, int v, const ParticlePattern& p, const void* values) {
  hid_t ds = variable_dataset(group, kNames[size_t(v)], memory_type(v), {p.particles * p.stride});
  hid_t file_space = check_id(H5Dget_space(ds), "H5Dget_space");
  hsize_t start = 0, stride = p.stride, count = p.particles;
  check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, &stride, &count, nullptr), "H5Sselect_hyperslab");
  hid_t mem_space = check_id(H5Screate_simple(1, &count, nullptr), "H5Screate_simple");
  check(H5Dwrite(ds, memory_type(v), mem_space, file_space, H5P_DEFAULT, values), "H5Dwrite");
  H5Sclose(mem_space);
  H5Sclose(file_space);
  H5Dclose(ds);
}

// IC: variable v gathered from the array of particles: every 8th 4-byte
// value from the v-th.
void write_gathered(hid_t group, int v, const ParticlePattern& p, const std::vector<Particle>& array) {
  hid_t ds = variable_dataset(group, kNames[size_t(v)], memory_type(v), {p.particles});
  hsize_t all = p.particles * kVariables, start = hsize_t(v), stride = kVariables, count = p.particles;
  hid_t mem_space = check_id(H5Screate_simple(1, &all, nullptr), "H5Screate_simple");
  check(H5Sselect_hyperslab(mem_space, H5S_SELECT_SET, &start, &stride, &count, nullptr), "H5Sselect_hyperslab");
  write_whole(ds, memory_type(v), mem_space, array.data());
  H5Sclose(mem_space);
  H5Dclose(ds);
}

void write_timestep(hid_t group, const ParticlePattern& p, const std::vector<std::vector<float>>& columns,
                    const std::vector<Particle>& array) {
  if (p.layout == "CI" || p.layout == "II") {
    hid_t file_type = particle_type();
    hid_t ds = variable_dataset(group, "particles", file_type, {p.particles});
    if (p.layout == "II") {
      write_whole(ds, file_type, H5S_ALL, array.data());
    } else {
      for (int v = 0; v < kVariables; ++v) {
        hid_t one = particle_type(v);
        write_whole(ds, one, H5S_ALL, columns[size_t(v)].data());
        H5Tclose(one);
      }
    }
    H5Dclose(ds);
    H5Tclose(file_type);
    return;
  }
  for (int v = 0; v < kVariables; ++v) {
    const void* values = columns[size_t(v)].data();
    if (p.layout == "CS") {
      write_strided(group, v, p, values);
    } else if (p.layout == "IC") {
      write_gathered(group, v, p, array);
    } else {
      hid_t ds = variable_dataset(group, kNames[size_t(v)], memory_type(v), shape(p));
      write_whole(ds, memory_type(v), H5S_ALL, values);
      H5Dclose(ds);
    }
  }
}

}  // namespace

void ParticlePattern::add_options(CLI::App& sub) {
  sub.add_option("--layout", layout, "CC | CI | IC | II | CS")->check(CLI::IsMember({"CC", "CI", "IC", "II", "CS"}));
  sub.add_option("--dims", dims, "CC's dimensions: 1, 2 or 3")->check(CLI::Range(1, 3));
  sub.add_option("--particles", particles, "particles a timestep (a multiple of 4096)");
  sub.add_option("--timesteps", timesteps, "timesteps");
  sub.add_option("--stride", stride, "CS: elements from one value to the next");
}

uint64_t write_particles(hid_t file, const ParticlePattern& p) {
  if (p.particles == 0 || p.particles % 4096 != 0) die("--particles must be a positive multiple of 4096");
  // Each variable's values as 4-byte columns (the ints' bits stored in the
  // floats' place), and the same particles as an array.
  std::vector<std::vector<float>> columns(kVariables, std::vector<float>(p.particles));
  std::vector<Particle> array(p.particles);
  for (hsize_t i = 0; i < p.particles; ++i) {
    float f = float(i) * 0.5f;
    array[i] = {f, f + 1, f + 2, f + 3, f + 4, f + 5, int(i), int(i * 2)};
    for (int v = 0; v < kVariables; ++v) std::memcpy(&columns[size_t(v)][i], reinterpret_cast<const char*>(&array[i]) + v * 4, 4);
  }
  for (int t = 0; t < p.timesteps; ++t) {
    std::string name = "Timestep_" + std::to_string(t);
    hid_t group = check_id(H5Gcreate2(file, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "H5Gcreate2");
    write_timestep(group, p, columns, array);
    H5Gclose(group);
  }
  return uint64_t(p.timesteps) * p.particles * sizeof(Particle);
}

}  // namespace bench
