# What `cmake --install` puts where, and the Debian package CPack makes of it (scripts/package):
# the binary, the catalogs (data/ → share/plumb, found beside the binary: common/data_dir.h), the
# man page made by help2man from the --help texts, bash and zsh completion made by
# `plumb completion`, the copyright file and the changelog. Debian Policy §12 (documentation,
# copyright) and lintian decide the details.
include(GNUInstallDirs)

install(TARGETS plumb RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/ DESTINATION ${CMAKE_INSTALL_DATADIR}/plumb
        FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
        DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                              WORLD_READ WORLD_EXECUTE)

set(plumb_generated ${CMAKE_BINARY_DIR}/package-files)
set(plumb_doc ${CMAKE_INSTALL_DATADIR}/doc/plumb)
file(MAKE_DIRECTORY ${plumb_generated})

add_custom_command(
  OUTPUT ${plumb_generated}/changelog.gz
  COMMAND gzip -9n -c ${PROJECT_SOURCE_DIR}/packaging/changelog > ${plumb_generated}/changelog.gz
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/changelog VERBATIM)
add_custom_command(
  OUTPUT ${plumb_generated}/plumb.bash ${plumb_generated}/_plumb
  COMMAND plumb completion bash > ${plumb_generated}/plumb.bash
  COMMAND plumb completion zsh > ${plumb_generated}/_plumb
  DEPENDS plumb VERBATIM)
set(plumb_package_outputs ${plumb_generated}/changelog.gz ${plumb_generated}/plumb.bash
    ${plumb_generated}/_plumb)

find_program(PLUMB_HELP2MAN help2man)
if(PLUMB_HELP2MAN)
  add_custom_command(
    OUTPUT ${plumb_generated}/plumb.1.gz
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/man-page $<TARGET_FILE:plumb> ${plumb_generated}/plumb.1.gz
    DEPENDS plumb ${PROJECT_SOURCE_DIR}/scripts/man-page VERBATIM)
  list(APPEND plumb_package_outputs ${plumb_generated}/plumb.1.gz)
  install(FILES ${plumb_generated}/plumb.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found: no man page (scripts/install-deps installs it)")
endif()
add_custom_target(plumb_package_files ALL DEPENDS ${plumb_package_outputs})

install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright ${plumb_generated}/changelog.gz
        DESTINATION ${plumb_doc})
install(FILES ${plumb_generated}/plumb.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME plumb)
install(FILES ${plumb_generated}/_plumb DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME plumb)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "plumb developers <plumb-dev@lists.plumb.dev>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # plumb_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/plumb-dev/plumb")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)  # Apache-2.0
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends: from the binary's libraries (dpkg-shlibdeps)
# libcurl is opened with dlopen (exporter/curl_library.h), so dpkg-shlibdeps cannot see it.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libcurl4")
# libpq is opened with dlopen too, and only for a postgresql:// store (baseline/store_postgres.h):
# recommended, so that a node using the SQLite store need not install it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libpq5")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "measures an AI training cluster and keeps a baseline")
# The extended description: CPack puts the summary above it as the synopsis line.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "plumb measures what a cluster of NVIDIA GPUs or Huawei Ascend NPUs delivers
before a long training run: collective bandwidth and tail latency per
topology layer, topology and versions, allocator traces, profiler traces of
every rank, and a step-time simulator of parallel layouts. What it measured is
stored as a baseline to compare later runs against.")
include(CPack)
