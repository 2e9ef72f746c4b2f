# Finds the third-party libraries shardkit builds on; shared by the tree and by find_package(shardkit).
#
# In the tree every dependency is required. From the installed package config
# (SHARDKIT_PACKAGE_CONFIG set) only what shardkit::core's interface names is looked
# for (LibTorch, spdlog), through find_dependency(), so that a missing one makes
# find_package(shardkit) report itself not found, naming the dependency. The LibTorch
# must then be the one the SDK was built against (SHARDKIT_SDK_TORCH_VERSION): the
# plugin loader refuses plugins built against another.
if(SHARDKIT_PACKAGE_CONFIG)
  include(CMakeFindDependencyMacro)
  if(SHARDKIT_SDK_TORCH_VERSION)
    find_dependency(Torch ${SHARDKIT_SDK_TORCH_VERSION} EXACT)
  else()
    find_dependency(Torch)
  endif()
  find_dependency(spdlog)
else()
  find_package(Torch REQUIRED)
  find_package(Boost 1.81 REQUIRED COMPONENTS json)
  find_package(tomlplusplus REQUIRED)
  find_package(spdlog REQUIRED)
endif()

# Whether the LibTorch found is a CUDA build: recorded in every plugin descriptor.
if(TORCH_CUDA_LIBRARIES OR CAFFE2_USE_CUDA)
  set(SHARDKIT_TORCH_CUDA 1)
else()
  set(SHARDKIT_TORCH_CUDA 0)
endif()
