# SPDX-License-Identifier: Apache-2.0
# vyre_add_plugin(<name> SOURCES ... [LIBS ...])
# Builds libvyre-backend-<name>.so: hidden visibility, one exported symbol
# (vyre_backend_query, through plugins/kit/plugin.map), the IR core and the
# plugin kit linked in statically. Installed into the loader's default folder.
function(vyre_add_plugin name)
  cmake_parse_arguments(P "NO_INSTALL" "" "SOURCES;LIBS" ${ARGN})
  set(target vyre-backend-${name})
  add_library(${target} MODULE ${P_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib" OUTPUT_NAME "vyre-backend-${name}"
    C_VISIBILITY_PRESET hidden)
  target_link_libraries(${target} PRIVATE vyre_kit vyre_ir ${P_LIBS})
  target_link_options(${target} PRIVATE
    "-Wl,--version-script=${PROJECT_SOURCE_DIR}/plugins/kit/plugin.map" "-Wl,--no-undefined")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/plugins/kit/plugin.map)
  if(NOT P_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/vyre)
  endif()
endfunction()
