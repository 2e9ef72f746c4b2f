# Finds what the lerobot dataset plugin links: Arrow/Parquet C++ from the venv's pyarrow wheel and FFmpeg.
#
# Debian 12 packages no Arrow, but PyPI's pyarrow wheel ships the C++ SDK (headers in
# pyarrow/include, libarrow.so.<major>00 / libparquet.so.<major>00 with versioned names only, no
# CMake or pkg-config files), so IMPORTED targets are made by hand. SHARDKIT_PYTHON (set by
# scripts/setup.sh) names the venv's Python; SHARDKIT_PYARROW_DIR overrides the pyarrow folder.
# Defines shardkit_lerobot_arrow and shardkit_lerobot_ffmpeg, or sets `out_missing` to what lacks.
function(shardkit_find_lerobot_dependencies out_missing)
  set(missing "")
  if(NOT SHARDKIT_PYARROW_DIR)
    set(_python "${SHARDKIT_PYTHON}")
    if(NOT _python)
      get_filename_component(_python "${TORCH_INSTALL_PREFIX}/../../../../bin/python" ABSOLUTE)
    endif()
    if(EXISTS "${_python}")
      execute_process(COMMAND "${_python}" -c "import os, pyarrow; print(os.path.dirname(pyarrow.__file__), end='')"
                      OUTPUT_VARIABLE _dir RESULT_VARIABLE _rc ERROR_QUIET)
      if(_rc EQUAL 0)
        set(SHARDKIT_PYARROW_DIR "${_dir}" CACHE PATH "Folder of the pyarrow package whose C++ SDK the lerobot plugin links")
      endif()
    endif()
  endif()
  file(GLOB _arrow "${SHARDKIT_PYARROW_DIR}/libarrow.so.[0-9]*")
  file(GLOB _parquet "${SHARDKIT_PYARROW_DIR}/libparquet.so.[0-9]*")
  if(NOT SHARDKIT_PYARROW_DIR OR NOT _arrow OR NOT _parquet OR NOT EXISTS "${SHARDKIT_PYARROW_DIR}/include/parquet/arrow/reader.h")
    string(APPEND missing "no Arrow/Parquet C++ SDK (pip install pyarrow into the venv of ${SHARDKIT_PYTHON}, or set -DSHARDKIT_PYARROW_DIR) ")
  elseif(NOT TARGET shardkit_lerobot_arrow)
    list(GET _arrow 0 _arrow)
    list(GET _parquet 0 _parquet)
    add_library(shardkit_lerobot_arrow INTERFACE IMPORTED GLOBAL)
    set_target_properties(shardkit_lerobot_arrow PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${SHARDKIT_PYARROW_DIR}/include"
      INTERFACE_LINK_LIBRARIES "${_parquet};${_arrow}")
  endif()
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(SHARDKIT_FFMPEG QUIET IMPORTED_TARGET GLOBAL libavformat libavcodec libavutil libswscale)
  endif()
  if(NOT SHARDKIT_FFMPEG_FOUND)
    string(APPEND missing "no FFmpeg development files (Debian: apt-get install libavformat-dev libavcodec-dev libavutil-dev libswscale-dev)")
  elseif(NOT TARGET shardkit_lerobot_ffmpeg)
    add_library(shardkit_lerobot_ffmpeg INTERFACE IMPORTED GLOBAL)
    set_target_properties(shardkit_lerobot_ffmpeg PROPERTIES INTERFACE_LINK_LIBRARIES PkgConfig::SHARDKIT_FFMPEG)
  endif()
  string(STRIP "${missing}" missing)
  set(${out_missing} "${missing}" PARENT_SCOPE)
endfunction()
