# Finds the third-party libraries shardkit builds on; shared by the tree and by find_package(shardkit).
#
# shardkit builds against exactly one LibTorch: 2.15.0. scripts/setup.sh installs it from
# PyPI's `torch` wheel into a cached venv and passes -DTorch_DIR; any other LibTorch 2.15.0
# works too (the official CPU-only libtorch archive: -DTorch_DIR=<libtorch>/share/cmake/Torch).
#
# In the tree every dependency is required. From the installed package config
# (SHARDKIT_PACKAGE_CONFIG set) only what shardkit::core's interface names is looked
# for (LibTorch, spdlog), through find_dependency(), so that a missing one makes
# find_package(shardkit) report itself not found, naming the dependency. The LibTorch
# must then be the one the SDK was built against (SHARDKIT_SDK_TORCH_VERSION): the
# plugin loader refuses plugins built against another.
set(SHARDKIT_REQUIRED_TORCH_VERSION 2.15.0)

if(SHARDKIT_PACKAGE_CONFIG)
  include(CMakeFindDependencyMacro)
  if(SHARDKIT_SDK_TORCH_VERSION)
    find_dependency(Torch ${SHARDKIT_SDK_TORCH_VERSION} EXACT)
  else()
    find_dependency(Torch)
  endif()
  find_dependency(spdlog)
else()
  # Torch's CUDA set-up reads TORCH_CUDA_ARCH_LIST from the environment (scripts/setup.sh names
  # one: there is no GPU to probe). Keep the value of the first configure, so that a re-run the
  # build tool starts in a bare environment (after a CMakeLists.txt edit) sees it too.
  if(DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(SHARDKIT_CONFIGURED_CUDA_ARCH_LIST "$ENV{TORCH_CUDA_ARCH_LIST}" CACHE STRING
        "TORCH_CUDA_ARCH_LIST the build was configured with" FORCE)
  elseif(SHARDKIT_CONFIGURED_CUDA_ARCH_LIST)
    set(ENV{TORCH_CUDA_ARCH_LIST} "${SHARDKIT_CONFIGURED_CUDA_ARCH_LIST}")
  endif()
  find_package(Torch REQUIRED)
  if(NOT Torch_VERSION VERSION_EQUAL SHARDKIT_REQUIRED_TORCH_VERSION)
    message(FATAL_ERROR "shardkit needs LibTorch ${SHARDKIT_REQUIRED_TORCH_VERSION}, but the \
LibTorch found is ${Torch_VERSION} (Torch_DIR=${Torch_DIR}). scripts/setup.sh installs \
torch==${SHARDKIT_REQUIRED_TORCH_VERSION} into a cached venv and configures against it; by hand, \
configure a new build directory with -DTorch_DIR=<torch package root>/share/cmake/Torch (this \
directory's CMakeCache.txt keeps the old LibTorch's paths).")
  endif()
  # Library paths LibTorch's config caches (c10, torch_cpu, ...) belong to the first LibTorch a
  # build tree saw: pointing the same tree at another one would mix the two.
  if(SHARDKIT_CONFIGURED_TORCH_DIR AND NOT SHARDKIT_CONFIGURED_TORCH_DIR STREQUAL Torch_DIR)
    message(FATAL_ERROR "this build directory (${CMAKE_BINARY_DIR}) was configured against the \
LibTorch at ${SHARDKIT_CONFIGURED_TORCH_DIR}, and now Torch_DIR=${Torch_DIR}: its cached library \
paths would mix the two. Use a new build directory (or delete this one).")
  endif()
  set(SHARDKIT_CONFIGURED_TORCH_DIR "${Torch_DIR}" CACHE INTERNAL "The LibTorch this tree was configured against")
  find_package(Boost 1.81 REQUIRED COMPONENTS json)
  find_package(tomlplusplus REQUIRED)
  find_package(yaml-cpp REQUIRED)
  find_package(spdlog REQUIRED)
  # xxHash checksums files: the trainer's checkpoint manifests and the text dataset's token
  # cache. Found here, before any subdirectory, so that every user sees the same result
  # (a variable found in one subdirectory is empty in one configured before it).
  find_path(SHARDKIT_XXHASH_INCLUDE_DIR xxhash.h)
  find_library(SHARDKIT_XXHASH_LIBRARY xxhash)
  if(NOT SHARDKIT_XXHASH_INCLUDE_DIR OR NOT SHARDKIT_XXHASH_LIBRARY)
    message(FATAL_ERROR "xxHash was not found (checkpoint manifests and the text dataset's \
token cache use it); Debian: apt-get install libxxhash-dev")
  endif()
endif()

# Whether the LibTorch found is a CUDA build: recorded in every plugin descriptor.
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES OR CAFFE2_USE_CUDA)
  set(SHARDKIT_TORCH_CUDA 1)
else()
  set(SHARDKIT_TORCH_CUDA 0)
endif()

# shardkit_torch: what shardkit's code needs of LibTorch. It links torch_cpu only, not
# ${TORCH_LIBRARIES}: CPU code must not load libtorch_cuda (which needs the wheel's NCCL and
# its CUDA libraries); CUDA parts add torch_cuda themselves. LibTorch ships fmt 12 headers in
# its include folder, which comes before the system one and shadows the fmt that Debian's
# spdlog was built with (fmt 9); LibTorch's own headers never include fmt, so a folder
# holding only the system fmt, searched first, gives spdlog its own.
if(NOT TARGET shardkit_torch)
  set(_shardkit_fmt_dirs)
  if(TARGET fmt::fmt)
    get_target_property(_shardkit_fmt_dirs fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
  endif()
  find_path(SHARDKIT_FMT_INCLUDE_DIR fmt/core.h HINTS ${_shardkit_fmt_dirs}
            PATHS /usr/include /usr/local/include NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH)
  set(_shardkit_torch_includes)
  if(SHARDKIT_FMT_INCLUDE_DIR AND NOT SHARDKIT_FMT_INCLUDE_DIR MATCHES "/torch/include$")
    set(_shardkit_fmt_shim "${CMAKE_BINARY_DIR}/shardkit-fmt-shim")
    file(MAKE_DIRECTORY "${_shardkit_fmt_shim}")
    if(NOT EXISTS "${_shardkit_fmt_shim}/fmt")
      file(CREATE_LINK "${SHARDKIT_FMT_INCLUDE_DIR}/fmt" "${_shardkit_fmt_shim}/fmt" SYMBOLIC)
    endif()
    list(APPEND _shardkit_torch_includes "${_shardkit_fmt_shim}")
  endif()
  list(APPEND _shardkit_torch_includes ${TORCH_INCLUDE_DIRS})
  add_library(shardkit_torch INTERFACE IMPORTED)
  set_target_properties(shardkit_torch PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_shardkit_torch_includes}"
    INTERFACE_LINK_LIBRARIES torch_cpu
    INTERFACE_COMPILE_FEATURES cxx_std_20)
endif()
