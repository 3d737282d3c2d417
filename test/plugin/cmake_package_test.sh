#!/usr/bin/env bash
# Installs h5journal into a scratch prefix and builds a tiny program against
# it with find_package(h5journal): the CMake package works for users.
set -euo pipefail
build=$1 hdf5_prefix=$2 work=$3
rm -rf "$work" && mkdir -p "$work/src"
cmake --install "$build" --prefix "$work/prefix" > /dev/null
cat > "$work/src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(h5journal REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE h5journal::h5journal)
CM
cat > "$work/src/main.c" <<'C'
#include <h5journal.h>
int main(void) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (H5Pset_fapl_journal(fapl, NULL) < 0) return 1;
  hid_t f = H5Fcreate("consumer.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  return f < 0 || H5Fclose(f) < 0;
}
C
cmake -S "$work/src" -B "$work/b" -DCMAKE_PREFIX_PATH="$work/prefix;$hdf5_prefix" > /dev/null
cmake --build "$work/b" > /dev/null
cd "$work" && ./b/consumer && [[ -f consumer.h5 && ! -e consumer.h5.jnl ]]
# And with pkg-config.
cd "$work/src"
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig:$work/prefix/lib64/pkgconfig:$(ls -d "$work"/prefix/lib/*/pkgconfig 2>/dev/null | tr '\n' ':')" \
  bash -c 'cc main.c -o "$0" $(pkg-config --cflags --libs h5journal) -Wl,-rpath,$(pkg-config --variable=libdir h5journal)' \
  "$work/pc_consumer"
rm -f consumer.h5 && "$work/pc_consumer" && [[ -f consumer.h5 && ! -e consumer.h5.jnl ]]
echo "find_package(h5journal), pkg-config h5journal and H5Pset_fapl_journal work from an installed prefix"
