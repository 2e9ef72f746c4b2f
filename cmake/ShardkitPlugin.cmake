# shardkit_add_plugin(): builds one plugin as MODULE library libshardkit-<kind>-<name>.so.
#
#   shardkit_add_plugin(NAME mlp KIND policy SOURCES mlp.cpp [LIBRARIES ...] [NO_INSTALL])
#
# The library links the SDK (shardkit::core), exports only its descriptor entry
# (everything else has hidden visibility) and records the LibTorch flavour it was
# built against. Built-in plugins land in the tree's plugin directory and are installed
# to <prefix>/lib/shardkit/plugins; third-party plugins (built against the installed SDK,
# where SHARDKIT_PLUGIN_OUTPUT_DIR is unset) land in OUTPUT_DIRECTORY or the current
# binary folder, and are not installed by this function.
function(shardkit_add_plugin)
  set(_SHARDKIT_KINDS policy backend checkpoint_format dataset comm logger)
  cmake_parse_arguments(P "NO_INSTALL" "NAME;KIND;OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT P_NAME OR NOT P_KIND OR NOT P_SOURCES)
    message(FATAL_ERROR "shardkit_add_plugin: NAME, KIND and SOURCES are required")
  endif()
  if(NOT P_KIND IN_LIST _SHARDKIT_KINDS)
    message(FATAL_ERROR "shardkit_add_plugin: unknown KIND '${P_KIND}' (one of: ${_SHARDKIT_KINDS})")
  endif()
  set(target shardkit-${P_KIND}-${P_NAME})
  add_library(${target} MODULE ${P_SOURCES})
  if(TARGET shardkit_core)
    target_link_libraries(${target} PRIVATE shardkit_core ${P_LIBRARIES})
    # A built-in plugin names every library it needs: a symbol left undefined fails the build
    # here, not the loader at the first run.
    target_link_options(${target} PRIVATE LINKER:--no-undefined)
  else()
    target_link_libraries(${target} PRIVATE shardkit::core ${P_LIBRARIES})
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "lib" OUTPUT_NAME ${target}
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  # LibTorch 2.15's headers (and so the SDK's) need C++20 whatever the project's default is.
  target_compile_features(${target} PRIVATE cxx_std_20)
  if(P_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIRECTORY})
  elseif(SHARDKIT_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${SHARDKIT_PLUGIN_OUTPUT_DIR})
  endif()
  target_compile_definitions(${target} PRIVATE
    SHARDKIT_PLUGIN_KIND="${P_KIND}" SHARDKIT_PLUGIN_NAME="${P_NAME}")
  set_property(GLOBAL APPEND PROPERTY SHARDKIT_RUNNABLE_TARGETS ${target})
  if(NOT P_NO_INSTALL AND SHARDKIT_PLUGIN_OUTPUT_DIR)
    # Installed to <libdir>/shardkit/plugins: libshardkit_core.so is two folders up.
    set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN/../..")
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/shardkit/plugins)
  endif()
endfunction()
