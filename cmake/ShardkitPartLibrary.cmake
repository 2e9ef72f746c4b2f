# shardkit_add_part_library(): a static library of machinery that some plugins or apps of this
# tree share (the DCP folders, the sharding engine, the policies' layers, ...). It is linked into
# each user with hidden symbols, so that the core and the installed SDK carry none of it.
#
#   shardkit_add_part_library(shardkit_dcp [SOURCES a.cpp ...] [INCLUDE_DIR dir] [PRIVATE_LIBRARIES ...])
#
# SOURCES defaults to every .cpp file of the calling folder; INCLUDE_DIR (the users' include
# folder) to its include/ folder.
function(shardkit_add_part_library target)
  cmake_parse_arguments(P "" "INCLUDE_DIR" "SOURCES;PRIVATE_LIBRARIES" ${ARGN})
  if(NOT P_SOURCES)
    file(GLOB P_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  endif()
  if(NOT P_INCLUDE_DIR)
    set(P_INCLUDE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/include)
  endif()
  add_library(${target} STATIC ${P_SOURCES})
  target_link_libraries(${target} PUBLIC shardkit_core PRIVATE ${P_PRIVATE_LIBRARIES})
  target_include_directories(${target} PUBLIC ${P_INCLUDE_DIR})
  set_target_properties(${target} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
endfunction()
