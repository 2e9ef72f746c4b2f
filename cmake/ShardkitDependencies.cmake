# Finds the third-party libraries shardkit builds on; shared by the tree and by find_package(shardkit).
find_package(Torch REQUIRED)
find_package(Boost 1.81 REQUIRED COMPONENTS json)
find_package(tomlplusplus REQUIRED)
find_package(spdlog REQUIRED)

# Whether the LibTorch found is a CUDA build: recorded in every plugin descriptor.
if(TORCH_CUDA_LIBRARIES OR CAFFE2_USE_CUDA)
  set(SHARDKIT_TORCH_CUDA 1)
else()
  set(SHARDKIT_TORCH_CUDA 0)
endif()
