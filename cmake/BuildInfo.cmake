# Records what this build is made of, for `gpusage --version` and every report's provenance.
find_package(Git QUIET)
set(GPUSAGE_GIT_COMMIT "unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} OUTPUT_VARIABLE _commit
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _commit)
    set(GPUSAGE_GIT_COMMIT "${_commit}")
  endif()
endif()
set(GPUSAGE_COMPILER "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")

# The CUDA toolkit is optional: only its version is recorded here (NVML is loaded at run time).
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND)
  set(GPUSAGE_CUDA_TOOLKIT "${CUDAToolkit_VERSION}")
else()
  set(GPUSAGE_CUDA_TOOLKIT "none")
endif()

configure_file(${CMAKE_SOURCE_DIR}/cmake/build_info.hpp.in
  ${CMAKE_BINARY_DIR}/generated/gpusage/build_info.hpp @ONLY)
