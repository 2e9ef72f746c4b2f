# Decides whether the tree builds its CUDA parts (the nccl comm plugin) and finds the NCCL they use.
#
# SHARDKIT_CUDA: AUTO (default) builds them when the LibTorch is a CUDA build and an NCCL
# >= 2.30 is found; ON requires them; OFF skips them (a CPU-only LibTorch never has them).
# The NCCL is the one the torch wheel brings (nvidia-nccl-cu13, beside the torch package):
# LibTorch 2.15's libtorch_cuda needs NCCL >= 2.30 and its ncclConfig_t (96 bytes) differs
# from older NCCLs (the CUDA 13.0 toolkit's 2.28 has 80), so ProcessGroupNCCL::Options
# must be compiled against the same nccl.h. Set SHARDKIT_NCCL_ROOT to use another.
set(SHARDKIT_CUDA AUTO CACHE STRING "Build the CUDA parts (nccl comm plugin): AUTO, ON or OFF")
set_property(CACHE SHARDKIT_CUDA PROPERTY STRINGS AUTO ON OFF)

get_filename_component(_shardkit_site "${TORCH_INSTALL_PREFIX}/.." ABSOLUTE)
set(SHARDKIT_NCCL_ROOT "${_shardkit_site}/nvidia/nccl" CACHE PATH "NCCL install (include/, lib/)")

set(SHARDKIT_CUDA_ENABLED OFF)
set(_shardkit_cuda_why "")
if(SHARDKIT_CUDA STREQUAL "OFF")
  set(_shardkit_cuda_why "SHARDKIT_CUDA=OFF")
elseif(NOT SHARDKIT_TORCH_CUDA OR NOT TARGET torch_cuda)
  set(_shardkit_cuda_why "the LibTorch at ${TORCH_INSTALL_PREFIX} is a CPU-only build")
else()
  find_path(SHARDKIT_NCCL_INCLUDE_DIR nccl.h HINTS "${SHARDKIT_NCCL_ROOT}/include" NO_DEFAULT_PATH)
  find_file(SHARDKIT_NCCL_LIBRARY NAMES libnccl.so.2 libnccl.so HINTS "${SHARDKIT_NCCL_ROOT}/lib"
            NO_DEFAULT_PATH)
  if(NOT SHARDKIT_NCCL_INCLUDE_DIR OR NOT SHARDKIT_NCCL_LIBRARY)
    set(_shardkit_cuda_why "no NCCL under SHARDKIT_NCCL_ROOT=${SHARDKIT_NCCL_ROOT} (pip install nvidia-nccl-cu13 into the torch venv)")
  else()
    file(STRINGS "${SHARDKIT_NCCL_INCLUDE_DIR}/nccl.h" _shardkit_nccl_version_lines
         REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
    string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*" "\\1" _major "${_shardkit_nccl_version_lines}")
    string(REGEX REPLACE ".*NCCL_MINOR ([0-9]+).*" "\\1" _minor "${_shardkit_nccl_version_lines}")
    string(REGEX REPLACE ".*NCCL_PATCH ([0-9]+).*" "\\1" _patch "${_shardkit_nccl_version_lines}")
    set(SHARDKIT_NCCL_VERSION "${_major}.${_minor}.${_patch}")
    if(SHARDKIT_NCCL_VERSION VERSION_LESS 2.30)
      set(_shardkit_cuda_why "NCCL ${SHARDKIT_NCCL_VERSION} at ${SHARDKIT_NCCL_ROOT} is older than the 2.30 LibTorch 2.15 needs")
    else()
      set(SHARDKIT_CUDA_ENABLED ON)
    endif()
  endif()
endif()

if(SHARDKIT_CUDA_ENABLED)
  # The wheel's CUDA libraries come first at run time: the toolkit's cudart 13.0 would
  # otherwise be found before the 13.2 LibTorch was built with.
  file(GLOB SHARDKIT_CUDA_RUNTIME_DIRS LIST_DIRECTORIES true "${_shardkit_site}/nvidia/*/lib")
  list(REMOVE_ITEM SHARDKIT_CUDA_RUNTIME_DIRS "${SHARDKIT_NCCL_ROOT}/lib")
  list(PREPEND SHARDKIT_CUDA_RUNTIME_DIRS "${SHARDKIT_NCCL_ROOT}/lib")
  message(STATUS "shardkit: CUDA parts on (NCCL ${SHARDKIT_NCCL_VERSION} from ${SHARDKIT_NCCL_ROOT})")
elseif(SHARDKIT_CUDA STREQUAL "ON")
  message(FATAL_ERROR "SHARDKIT_CUDA=ON but the CUDA parts cannot be built: ${_shardkit_cuda_why}")
else()
  message(STATUS "shardkit: CUDA parts off (${_shardkit_cuda_why})")
endif()
