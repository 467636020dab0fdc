# A fully static pi-hydrate for sandboxes and bootstrap scripts
# (docs/install.md): glibc, libstdc++, libgcc, Boost.Filesystem and SQLite linked in,
# so it runs under `env -i` on a machine with nothing installed.
set(PIHYDRATE_STATIC_LINK_OPTIONS -static -static-libstdc++ -static-libgcc -Wl,--wrap=dlopen)

if(PIHYDRATE_STATIC)
  # Boost_USE_STATIC_LIBS made Boost::filesystem the archive already.
  target_link_options(pi-hydrate PRIVATE ${PIHYDRATE_STATIC_LINK_OPTIONS})
  target_sources(pi-hydrate PRIVATE ${PROJECT_SOURCE_DIR}/src/static/no_dynamic_loading.cc)
elseif(PIHYDRATE_BUILD_TESTS AND NOT PIHYDRATE_SANITIZE AND NOT PIHYDRATE_FUZZ)
  # The test build proves the static link without compiling anything twice:
  # pi-hydrate-static links pi-hydrate's own object and archives, with
  # Boost.Filesystem's archive in place of the shared library (test
  # static_binary).
  find_library(PIHYDRATE_BOOST_FILESYSTEM_ARCHIVE NAMES libboost_filesystem.a)
  find_library(PIHYDRATE_SQLITE3_ARCHIVE NAMES libsqlite3.a)
  if(PIHYDRATE_BOOST_FILESYSTEM_ARCHIVE AND PIHYDRATE_SQLITE3_ARCHIVE)
    add_executable(pi-hydrate-static $<TARGET_OBJECTS:pi_hydrate_main> ${PROJECT_SOURCE_DIR}/src/static/no_dynamic_loading.cc)
    add_dependencies(pi-hydrate-static pihydrate_cli pihydrate)
    target_link_options(pi-hydrate-static PRIVATE ${PIHYDRATE_STATIC_LINK_OPTIONS})
    target_link_libraries(pi-hydrate-static PRIVATE $<TARGET_FILE:pihydrate_cli> $<TARGET_FILE:pihydrate>
                                                    ${PIHYDRATE_BOOST_FILESYSTEM_ARCHIVE} ${PIHYDRATE_SQLITE3_ARCHIVE}
                                                    Threads::Threads m ${CMAKE_DL_LIBS})
  else()
    message(STATUS "libboost_filesystem.a or libsqlite3.a not found: pi-hydrate-static and its test are skipped")
  endif()
endif()
