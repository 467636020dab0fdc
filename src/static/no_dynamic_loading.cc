// Linked into the fully static pi-hydrate only, with -Wl,--wrap=dlopen
// (cmake/static_executable.cmake). pi-hydrate never loads code at run time;
// SQLite's extension loader is the one caller of dlopen, and glibc's static
// dlopen would need the very glibc it was linked with at run time (the linker
// warns so). The wrap sends SQLite's call here instead: loading fails, as
// SQLite expects when a library cannot be opened.
extern "C" void* __wrap_dlopen(const char*, int) { return nullptr; }
