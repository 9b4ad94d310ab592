# Read by cpack for each generator (CPACK_PROJECT_CONFIG_FILE, cmake/Install.cmake): the tarball's files sit
# under its top folder as bin/ and share/, not usr/bin/ (the .deb keeps /usr).
if(CPACK_GENERATOR STREQUAL "TGZ")
  set(CPACK_PACKAGING_INSTALL_PREFIX "/")
  set(CPACK_SET_DESTDIR OFF)
endif()
