# SPDX-License-Identifier: Apache-2.0
# Installs the CMake package (find_package(vyre), with the plugin SDK:
# vyre::plugin_kit and vyre_add_plugin()), pkg-config files, the man page and
# the conformance cases. Headers, libraries, plugins and the tool
# install themselves; this file only gives the tool a relative RPATH so an
# install into any prefix runs without LD_LIBRARY_PATH.
include(CMakePackageConfigHelpers)
add_library(vyre_backend_sdk INTERFACE)
target_link_libraries(vyre_backend_sdk INTERFACE vyre_abi)
set_target_properties(vyre_backend_sdk PROPERTIES EXPORT_NAME backend)
set_target_properties(vyre_abi PROPERTIES EXPORT_NAME abi)
# vyre_kit is the plugin SDK (vyre::plugin_kit, plugins/CMakeLists.txt).
install(TARGETS vyre vyre_abi vyre_backend_sdk vyre_kit EXPORT vyreTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# vyre_add_plugin(), included by vyreConfig.cmake.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/VyrePlugin.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vyre)
install(EXPORT vyreTargets NAMESPACE vyre:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vyre)
# Relative to the prefix, so the package resolves it wherever it is installed.
set(VYRE_PLUGIN_INSTALL_RELDIR ${CMAKE_INSTALL_LIBDIR}/vyre)
set(VYRE_CONFORMANCE_INSTALL_RELDIR ${CMAKE_INSTALL_DATADIR}/vyre/conformance)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vyreConfig.cmake.in
  ${PROJECT_BINARY_DIR}/vyreConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vyre
  PATH_VARS VYRE_PLUGIN_INSTALL_RELDIR VYRE_CONFORMANCE_INSTALL_RELDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vyreConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vyreConfig.cmake ${PROJECT_BINARY_DIR}/vyreConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vyre)
# The .pc files find their prefix from their own folder (${pcfiledir}), so a
# prefix moved after install, or installed with `cmake --install --prefix`,
# still resolves. Needs relative install dirs (the GNUInstallDirs defaults).
foreach(d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    message(FATAL_ERROR "CMAKE_INSTALL_${d}=${CMAKE_INSTALL_${d}} is absolute; the pkg-config files and the CMake package are relative to the prefix. Fix: give it relative to CMAKE_INSTALL_PREFIX (e.g. lib64).")
  endif()
endforeach()
file(RELATIVE_PATH VYRE_PC_PREFIX_REL /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" VYRE_PC_PREFIX_REL "${VYRE_PC_PREFIX_REL}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/vyre.pc.in ${PROJECT_BINARY_DIR}/vyre.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/vyre-backend.pc.in ${PROJECT_BINARY_DIR}/vyre-backend.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/vyre.pc ${PROJECT_BINARY_DIR}/vyre-backend.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(EXISTS ${PROJECT_SOURCE_DIR}/docs/vyre.1)
  install(FILES ${PROJECT_SOURCE_DIR}/docs/vyre.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
# The tool finds libvyre next to it (bin/../lib) in any prefix.
if(TARGET vyre-cli)
  set_target_properties(vyre-cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
endif()
# The conformance cases and known-failure lists, so plugin authors can run
# `vyre conform --plugin PATH --cases <datadir>/vyre/conformance/cases` without
# the source tree.
if(EXISTS ${PROJECT_SOURCE_DIR}/tests/conformance/cases)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/tests/conformance/cases
    ${PROJECT_SOURCE_DIR}/tests/conformance/known
    DESTINATION ${CMAKE_INSTALL_DATADIR}/vyre/conformance)
endif()
