# The HDF5 h5journal builds against: any HDF5 >= 1.14, serial or parallel,
# however it provides itself.  Defines
#   h5journal_hdf5          an interface target: HDF5's headers and library
#                           (and MPI's, for a parallel HDF5)
#   h5journal_hdf5_headers  HDF5's headers alone (and MPI), for the driver,
#                           which calls the HDF5 that loads it
#   H5JOURNAL_HDF5_VERSION  its version, read from its own H5public.h
#   H5JOURNAL_PARALLEL      ON exactly when its H5pubconf.h has H5_HAVE_PARALLEL
#   H5JOURNAL_HDF5_FROM     "config" or "pkg-config": how it was found
#   HDF5_BIN_DIR            where its tools (h5dump, h5diff) are, if anywhere
#
# Looked for, in order:
#   1. the pkg-config module H5JOURNAL_HDF5_PKG names, if set
#      (Debian: hdf5-serial or hdf5-mpich);
#   2. HDF5's CMake package, without a version (its version file accepts
#      only the same major.minor): HDF5_ROOT, hdf5_DIR or CMAKE_PREFIX_PATH,
#      Debian's /usr/lib/<arch>/hdf5/{serial,mpich} included;
#   3. the pkg-config module hdf5 (Debian's default flavour, conda, spack).
# The version and the flavour come from the headers, whichever way it was
# found, so that a package's own description cannot mislead.

set(H5JOURNAL_HDF5_PKG "" CACHE STRING "pkg-config module of the HDF5 to use (e.g. hdf5-serial, hdf5-mpich)")
set(_hdf5_missing "HDF5 >= 1.14 not found.  On Debian 13 or later: apt-get install libhdf5-dev (serial) or \
libhdf5-mpich-dev (parallel).  On Debian 12, scripts/build-hdf5.sh builds 1.14 from Debian's source.  \
Elsewhere pass -DHDF5_ROOT=<prefix>, -Dhdf5_DIR=<dir with hdf5-config.cmake> or -DH5JOURNAL_HDF5_PKG=<module>.")

if(NOT TARGET h5journal_hdf5)
  add_library(h5journal_hdf5 INTERFACE)
  add_library(h5journal_hdf5_headers INTERFACE)
endif()
find_package(PkgConfig)

if(H5JOURNAL_HDF5_PKG)
  if(NOT PKG_CONFIG_FOUND)
    message(FATAL_ERROR "H5JOURNAL_HDF5_PKG needs pkg-config: apt-get install pkg-config")
  endif()
  pkg_check_modules(JHDF5 REQUIRED IMPORTED_TARGET GLOBAL ${H5JOURNAL_HDF5_PKG})
  set(H5JOURNAL_HDF5_FROM pkg-config)
else()
  find_package(hdf5 CONFIG QUIET HINTS ${HDF5_ROOT} $ENV{HDF5_ROOT} NAMES hdf5 hdf5_serial)
  if(hdf5_FOUND AND TARGET hdf5-shared)
    set(H5JOURNAL_HDF5_FROM config)
    set(_hdf5_target hdf5-shared)
  elseif(hdf5_FOUND AND TARGET hdf5::hdf5-shared)
    set(H5JOURNAL_HDF5_FROM config)
    set(_hdf5_target hdf5::hdf5-shared)
  elseif(PKG_CONFIG_FOUND)
    pkg_check_modules(JHDF5 IMPORTED_TARGET GLOBAL hdf5)
    if(JHDF5_FOUND)
      set(H5JOURNAL_HDF5_FROM pkg-config)
    endif()
  endif()
endif()
if(NOT H5JOURNAL_HDF5_FROM)
  message(FATAL_ERROR "${_hdf5_missing}")
endif()

if(H5JOURNAL_HDF5_FROM STREQUAL "config")
  get_target_property(_hdf5_includes ${_hdf5_target} INTERFACE_INCLUDE_DIRECTORIES)
else()
  set(_hdf5_includes ${JHDF5_INCLUDE_DIRS})
  if(NOT _hdf5_includes)  # a module whose headers are in the default path
    set(_hdf5_includes /usr/include)
  endif()
endif()
find_file(_hdf5_public H5public.h PATHS ${_hdf5_includes} NO_DEFAULT_PATH NO_CACHE)
find_file(_hdf5_pubconf H5pubconf.h PATHS ${_hdf5_includes} NO_DEFAULT_PATH NO_CACHE)
if(NOT _hdf5_public OR NOT _hdf5_pubconf)
  message(FATAL_ERROR "HDF5 was found (${H5JOURNAL_HDF5_FROM}) but its H5public.h or H5pubconf.h is not in "
                      "${_hdf5_includes}.  ${_hdf5_missing}")
endif()
file(STRINGS "${_hdf5_public}" _vers REGEX "^#define H5_VERS_(MAJOR|MINOR|RELEASE)[ \t]+[0-9]+")
foreach(part MAJOR MINOR RELEASE)
  string(REGEX REPLACE ".*#define H5_VERS_${part}[ \t]+([0-9]+).*" "\\1" _v_${part} "${_vers}")
endforeach()
set(H5JOURNAL_HDF5_VERSION "${_v_MAJOR}.${_v_MINOR}.${_v_RELEASE}")
if(H5JOURNAL_HDF5_VERSION VERSION_LESS 1.14)
  message(FATAL_ERROR "HDF5 ${H5JOURNAL_HDF5_VERSION} (${_hdf5_public}) is too old: h5journal needs 1.14 or "
                      "later.  ${_hdf5_missing}")
endif()
file(STRINGS "${_hdf5_pubconf}" _parallel REGEX "^#define H5_HAVE_PARALLEL[ \t]+1")
if(_parallel)
  set(H5JOURNAL_PARALLEL ON)
else()
  set(H5JOURNAL_PARALLEL OFF)
endif()

if(H5JOURNAL_PARALLEL)
  # A parallel HDF5's headers include mpi.h.
  find_package(MPI COMPONENTS C)
  if(NOT MPI_C_FOUND)
    message(FATAL_ERROR "HDF5 ${H5JOURNAL_HDF5_VERSION} is parallel, and MPI for C was not found: "
                        "apt-get install libmpich-dev (the MPI Debian's libhdf5-mpich-dev is built with)")
  endif()
  target_link_libraries(h5journal_hdf5 INTERFACE MPI::MPI_C)
  target_link_libraries(h5journal_hdf5_headers INTERFACE MPI::MPI_C)
endif()
target_include_directories(h5journal_hdf5_headers SYSTEM INTERFACE ${_hdf5_includes})
if(H5JOURNAL_HDF5_FROM STREQUAL "config")
  target_link_libraries(h5journal_hdf5 INTERFACE ${_hdf5_target})
else()
  target_link_libraries(h5journal_hdf5 INTERFACE PkgConfig::JHDF5)
endif()

# Its tools, for the tests: beside the library, else on PATH.
foreach(_root ${_hdf5_includes})
  list(APPEND _hdf5_tool_hints "${_root}/../bin" "${_root}/../../bin")
endforeach()
find_program(H5DUMP h5dump HINTS ${HDF5_TOOLS_DIR} ${HDF5_ROOT}/bin ${_hdf5_tool_hints} NO_DEFAULT_PATH)
find_program(H5DUMP h5dump)
if(H5DUMP)
  get_filename_component(HDF5_BIN_DIR "${H5DUMP}" DIRECTORY)
endif()

if(H5JOURNAL_PARALLEL)
  set(_flavour parallel)
else()
  set(_flavour serial)
endif()
message(STATUS "HDF5 ${H5JOURNAL_HDF5_VERSION}, ${_flavour} (found by ${H5JOURNAL_HDF5_FROM}; ${_hdf5_public})")
