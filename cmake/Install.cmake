# Install layout, generated docs, the Debian package and the tarball.
#   bin/gpusage             gpusage-portable where it is built (glibc alone; src/portable), else gpusage
#   bin/gpusage-bench       when built: component "bench", never in the packages (it links LibTorch)
#   share/gpusage/          the data files the binary was built from (gpus.toml, doctor/rules.toml,
#                           validation/published.csv, with their READMEs): compiled in, so an installed
#                           gpusage needs no search path and works from any directory; shipped for reading
#                           and for `gpusage validate /usr/share/gpusage/validation/published.csv`
#   share/man/man1/gpusage.1.gz, share/bash-completion/completions/gpusage,
#   share/zsh/vendor-completions/_gpusage   written by `gpusage _docs` from the CLI11 definitions
include(GNUInstallDirs)

set(GPUSAGE_ZSH_COMPLETION_DIR "${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions" CACHE STRING
  "Where the zsh completion _gpusage is installed (relative to the prefix; Debian's zsh reads vendor-completions)")

# The man page and completions, from the built binary (part of `all`, not of `--target gpusage`): the one the
# packages carry, so that `make package` links one binary; in English whatever the builder's locale (LC_ALL=C:
# gpusage would otherwise follow a zh_* locale).
set(docs_dir ${CMAKE_BINARY_DIR}/generated/docs)
set(docs_binary gpusage)
if(TARGET gpusage-portable)
  set(docs_binary gpusage-portable)
endif()
add_custom_command(
  OUTPUT ${docs_dir}/gpusage.1.gz ${docs_dir}/gpusage.bash ${docs_dir}/_gpusage
  COMMAND ${CMAKE_COMMAND} -E make_directory ${docs_dir}
  COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C $<TARGET_FILE:${docs_binary}> _docs --man > ${docs_dir}/gpusage.1
  COMMAND gzip -9 -n -f ${docs_dir}/gpusage.1
  COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C $<TARGET_FILE:${docs_binary}> _docs --bash > ${docs_dir}/gpusage.bash
  COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C $<TARGET_FILE:${docs_binary}> _docs --zsh > ${docs_dir}/_gpusage
  DEPENDS ${docs_binary}
  COMMENT "Generating the man page and shell completions from gpusage's command definitions"
  VERBATIM)
add_custom_target(gpusage_docs ALL DEPENDS ${docs_dir}/gpusage.1.gz ${docs_dir}/gpusage.bash ${docs_dir}/_gpusage)

if(TARGET gpusage-portable)
  install(TARGETS gpusage-portable RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT gpusage)
else()
  install(TARGETS gpusage RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT gpusage)
endif()
if(TARGET gpusage-bench)
  install(TARGETS gpusage-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT bench)
endif()
install(FILES data/README.md data/gpus.toml DESTINATION ${CMAKE_INSTALL_DATADIR}/gpusage COMPONENT gpusage)
install(FILES data/doctor/rules.toml data/doctor/error_codes.toml DESTINATION ${CMAKE_INSTALL_DATADIR}/gpusage/doctor
  COMPONENT gpusage)
install(FILES data/validation/README.md data/validation/published.csv
  DESTINATION ${CMAKE_INSTALL_DATADIR}/gpusage/validation COMPONENT gpusage)
install(FILES ${docs_dir}/gpusage.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT gpusage)
install(FILES ${docs_dir}/gpusage.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  RENAME gpusage COMPONENT gpusage)
install(FILES ${docs_dir}/_gpusage DESTINATION ${GPUSAGE_ZSH_COMPLETION_DIR} COMPONENT gpusage)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT gpusage)

# `cpack` in the build tree (after building gpusage-portable and gpusage_docs: `make package`), the component
# "gpusage" alone:
#   DEB  gpusage_VERSION_amd64.deb, /usr. Depends computed by dpkg-shlibdeps from the binary's shared
#        libraries: libc6 (>= the glibc floor) for gpusage-portable; Debian's libfmt9, libncurses6, ... where
#        only the shared-library gpusage could be built. NVML is loaded with dlopen at run time: no dependency.
#   TGZ  gpusage-VERSION-linux-x86_64.tar.gz: gpusage-VERSION-linux-x86_64/{bin,share} (cmake/CPackOptions.cmake),
#        to unpack anywhere or into ~/.local with --strip-components=1.
set(CPACK_PACKAGE_NAME gpusage)
set(CPACK_PACKAGE_VENDOR "gpusage")
set(CPACK_PACKAGE_CONTACT "gpusage maintainers <gpusage@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "GPU advisor for deep-learning training: catalog, memory and speed planner, monitor, doctor")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_PACKAGE_FILE_NAME "gpusage-${PROJECT_VERSION}-linux-x86_64")
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};gpusage;gpusage;/")
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_SOURCE_DIR}/cmake/CPackOptions.cmake)
include(CPack)
