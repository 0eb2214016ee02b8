# Every third-party dependency is found here, once. All of them are Debian 12 packages that
# scripts/bootstrap installs.

find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED)            # header-only Interprocess
find_package(cppzmq REQUIRED)                # brings libzmq
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(prometheus-cpp REQUIRED)
if(AZ_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(AZ_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

# LibTorch. A CUDA build is taken through Torch_DIR (its TorchConfig.cmake); otherwise Debian's CPU
# libtorch-dev, which ships headers and libraries but no TorchConfig.cmake.
add_library(az_torch INTERFACE)
if(DEFINED Torch_DIR OR DEFINED ENV{Torch_DIR})
  find_package(Torch REQUIRED)
  # libstdc++ first: pytorch.org's and pip's LibTorch are built with a devtoolset compiler that links
  # parts of libstdc++ (std::filesystem among them) into libtorch_cpu.so and exports them. Listed
  # after LibTorch, the system libstdc++ loses those symbols to LibTorch's copies, whose layout is
  # not ours: listing a directory crashed on an H100 machine with pip's LibTorch 2.11 (docs/nn.md).
  target_link_libraries(az_torch INTERFACE stdc++ ${TORCH_LIBRARIES})
  target_compile_options(az_torch INTERFACE ${TORCH_CXX_FLAGS})
  message(STATUS "LibTorch from Torch_DIR: ${Torch_DIR}")
else()
  find_path(AZ_TORCH_API_INCLUDE torch/torch.h PATHS /usr/include/torch/csrc/api/include REQUIRED)
  find_library(AZ_TORCH_LIB torch REQUIRED)
  find_library(AZ_TORCH_CPU_LIB torch_cpu REQUIRED)
  find_library(AZ_C10_LIB c10 REQUIRED)
  target_include_directories(az_torch SYSTEM INTERFACE ${AZ_TORCH_API_INCLUDE})
  target_link_libraries(az_torch INTERFACE ${AZ_TORCH_LIB} ${AZ_TORCH_CPU_LIB} ${AZ_C10_LIB})
  message(STATUS "LibTorch (Debian, CPU): ${AZ_TORCH_LIB}")
endif()
