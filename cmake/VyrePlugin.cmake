# SPDX-License-Identifier: Apache-2.0
# vyre_add_plugin(<name> SOURCES ... [LIBS ...] [INSTALL_DIR dir] [NO_INSTALL])
#
# Builds libvyre-backend-<name>.so, a vyre backend plugin: a MODULE with
# hidden visibility, exactly one exported symbol (vyre_backend_query,
# through the kit's version script), linked with -Wl,--no-undefined, and the
# plugin kit (vyre_kit.h, kit_plan.h: errors, handles, disk cache, lowering
# plan) linked in statically. `cmake --install` puts it into the folder the
# loader searches by default.
#
# The same function serves two places:
#   - vyre's own tree (plugins/, plugin-cuda/, plugin-vulkan/): links the
#     in-tree kit and IR library; installs into <libdir>/vyre;
#   - a third-party plugin, through the installed package:
#       find_package(vyre 0.1 REQUIRED)
#       vyre_add_plugin(myplugin SOURCES my.c)
#     links vyre::plugin_kit (which brings vyre::backend, the ABI header);
#     installs into vyre_PLUGIN_DIR (or INSTALL_DIR). See docs/writing-a-plugin.md.
set(_VYRE_PLUGIN_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")

function(vyre_add_plugin name)
  cmake_parse_arguments(P "NO_INSTALL" "INSTALL_DIR" "SOURCES;LIBS" ${ARGN})
  if(NOT P_SOURCES)
    message(FATAL_ERROR "vyre_add_plugin(${name}): no SOURCES given. Fix: vyre_add_plugin(${name} SOURCES a.c b.c).")
  endif()
  if(TARGET vyre_kit)
    # Inside vyre's source tree.
    set(kit vyre_kit vyre_ir)
    set(map "${_VYRE_PLUGIN_CMAKE_DIR}/../plugins/kit/plugin.map")
    set(default_dir "${CMAKE_INSTALL_LIBDIR}/vyre")
  elseif(TARGET vyre::plugin_kit)
    # Through the installed package (vyreConfig.cmake).
    set(kit vyre::plugin_kit)
    set(map "${_VYRE_PLUGIN_CMAKE_DIR}/vyre-plugin.map")
    set(default_dir "${vyre_PLUGIN_DIR}")
  else()
    message(FATAL_ERROR "vyre_add_plugin(${name}): the vyre plugin kit is not available. Fix: call find_package(vyre) before vyre_add_plugin().")
  endif()
  set(target vyre-backend-${name})
  add_library(${target} MODULE ${P_SOURCES})
  # The loader looks for files named libvyre-backend-<name>.so.
  set_target_properties(${target} PROPERTIES
    PREFIX "lib" OUTPUT_NAME "vyre-backend-${name}"
    C_VISIBILITY_PRESET hidden)
  target_link_libraries(${target} PRIVATE ${kit} ${P_LIBS})
  target_link_options(${target} PRIVATE "-Wl,--version-script=${map}" "-Wl,--no-undefined")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${map}")
  if(NOT P_NO_INSTALL)
    if(NOT P_INSTALL_DIR)
      set(P_INSTALL_DIR "${default_dir}")
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION "${P_INSTALL_DIR}")
  endif()
endfunction()
