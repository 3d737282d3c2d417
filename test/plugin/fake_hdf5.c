/* A library that loads the plugin as HDF5 does, calling its entry points
 * from its own code, and says it is HDF5 of the build's version and
 * flavour, but defines none of HDF5's API.  The plugin must refuse, naming
 * this library and what it lacks, and must not crash
 * (test/plugin/another_hdf5_copy_test.sh). */
#include <dlfcn.h>
#include <H5FDdevelop.h>
#include <H5PLextern.h>
#include <stdio.h>

#define H5J_STR(x) #x
#define H5J_VERSION(a, b, c) "HDF5 library version: " H5J_STR(a) "." H5J_STR(b) "." H5J_STR(c)
const char H5_lib_vers_info_g[] = H5J_VERSION(H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
#ifdef H5_HAVE_PARALLEL
herr_t H5Pset_fapl_mpio(hid_t fapl, MPI_Comm comm, MPI_Info info) { return (void)fapl, (void)comm, (void)info, -1; }
#endif

/* 0 if the plugin at `path` hands over a driver that refuses to open a file. */
int load_plugin_as_hdf5(const char *path) {
    void *plugin = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (plugin == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    H5PL_type_t (*type)(void) = (H5PL_type_t(*)(void))dlsym(plugin, "H5PLget_plugin_type");
    const void *(*info)(void) = (const void *(*)(void))dlsym(plugin, "H5PLget_plugin_info");
    if (type == NULL || info == NULL || type() != H5PL_TYPE_VFD) return 1;
    const H5FD_class_t *cls = info();
    if (cls == NULL) return 1;
    /* HDF5's H5F_ACC_RDWR and H5P_DEFAULT, without the macros, which call H5open. */
    return cls->open("a.h5", 0x0001u, 0, HADDR_UNDEF) == NULL ? 0 : 1;
}
