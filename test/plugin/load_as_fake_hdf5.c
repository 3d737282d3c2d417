/* Runs fake_hdf5.c's loader on the plugin given. */
int load_plugin_as_hdf5(const char *path);
int main(int argc, char **argv) { return argc == 2 ? load_plugin_as_hdf5(argv[1]) : 2; }
