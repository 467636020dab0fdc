# What `cmake --install build --prefix P` and `cpack -G DEB` put where
# (docs/install.md): the executable, its man page and shell completions, and
# the library with its headers, CMake package and pkg-config file.
include(CMakePackageConfigHelpers)

install(TARGETS pi-hydrate RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES man/pi-hydrate.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# Where each shell looks for completions under the prefix.
set(PIHYDRATE_BASH_COMPLETION_DIR ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
    CACHE STRING "Where the bash completion is installed")
set(PIHYDRATE_ZSH_COMPLETION_DIR ${CMAKE_INSTALL_DATADIR}/zsh/site-functions
    CACHE STRING "Where the zsh completion is installed")
set(PIHYDRATE_FISH_COMPLETION_DIR ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d
    CACHE STRING "Where the fish completion is installed")
install(FILES completions/pi-hydrate.bash DESTINATION ${PIHYDRATE_BASH_COMPLETION_DIR} RENAME pi-hydrate)
install(FILES completions/_pi-hydrate DESTINATION ${PIHYDRATE_ZSH_COMPLETION_DIR})
install(FILES completions/pi-hydrate.fish DESTINATION ${PIHYDRATE_FISH_COMPLETION_DIR})

# The library. cli.h is left out: run_cli lives in pihydrate_cli, which is
# the executable's and not installed.
set(PIHYDRATE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pihydrate)
install(TARGETS pihydrate EXPORT pihydrateTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/pihydrate DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "cli.h" EXCLUDE)
install(EXPORT pihydrateTargets NAMESPACE pihydrate:: DESTINATION ${PIHYDRATE_CMAKE_DIR})
configure_package_config_file(cmake/pihydrateConfig.cmake.in ${PROJECT_BINARY_DIR}/pihydrateConfig.cmake
                              INSTALL_DESTINATION ${PIHYDRATE_CMAKE_DIR})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pihydrateConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pihydrateConfig.cmake ${PROJECT_BINARY_DIR}/pihydrateConfigVersion.cmake
        DESTINATION ${PIHYDRATE_CMAKE_DIR})

# pkg-config: paths relative to the .pc file itself (${pcfiledir}), so the
# file stays right whatever --prefix or DESTDIR the install is given.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(PIHYDRATE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(PIHYDRATE_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(PIHYDRATE_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH up "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  set(PIHYDRATE_PC_PREFIX "\${pcfiledir}/${up}")
  set(PIHYDRATE_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(PIHYDRATE_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(cmake/pihydrate.pc.in ${PROJECT_BINARY_DIR}/pihydrate.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pihydrate.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# `cpack -G DEB`: one package with all of the above under /usr.
set(CPACK_PACKAGE_NAME pi-hydrate)
set(CPACK_PACKAGE_CONTACT "pi-hydrate maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "validate and hydrate sessions of the pi coding agent")
set(CPACK_PACKAGE_DESCRIPTION "pi-hydrate checks pi session files the way pi loads them, and rebuilds
clean linear v3 sessions from sessions and thread exports so that pi resumes them in a new
working directory. Includes the pihydrate C++ static library, its headers, CMake package and
pkg-config file.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_STRIP_FILES ON)
find_program(PIHYDRATE_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(PIHYDRATE_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)    # Depends read from the binary's shared libraries
else()
  # Debian 12's names for what a dynamic pi-hydrate links (tools/install-deps.sh adds dpkg-dev).
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libstdc++6 (>= 12), libgcc-s1 (>= 3.0), libboost-filesystem1.74.0, libsqlite3-0")
endif()
# Building against the library needs Boost.Filesystem's development files.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libboost-filesystem-dev, libsqlite3-dev, pkg-config")
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git" "/build[^/]*/")
include(CPack)
