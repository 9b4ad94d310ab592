# Precompiled headers for the heavy third-party headers, one per target (GPUSAGE_PCH, off by default):
# LibTorch's torch/torch.h in the bench, CLI11 in the CLI, nlohmann-json, fmt and GoogleTest elsewhere.
# A header parsed once per target instead of once per source file; see README "Build times" for figures.
# Off by default: with the standard headers precompiled, GCC 12 reports false -Warray-bounds inside
# libstdc++'s string concatenation (in src/monitor/views.cpp and others), which -Werror (CI) turns into
# errors. -DGPUSAGE_PCH=ON for faster local builds with warnings not treated as errors.
option(GPUSAGE_PCH "Precompile the heavy third-party headers (LibTorch, nlohmann-json, fmt, CLI11, GoogleTest)" OFF)

# ccache caches a compile that uses a precompiled header only with these sloppiness settings (ccache manual,
# "Precompiled headers"); they are set for gpusage's compiles alone, through the launcher.
if(GPUSAGE_PCH AND GPUSAGE_CCACHE AND CMAKE_CXX_COMPILER_LAUNCHER STREQUAL GPUSAGE_CCACHE)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime ${GPUSAGE_CCACHE})
endif()

# gpusage_precompile(target header…): precompile `header…` for `target` when GPUSAGE_PCH is on.
function(gpusage_precompile target)
  if(GPUSAGE_PCH AND TARGET ${target})
    target_precompile_headers(${target} PRIVATE ${ARGN})
  endif()
endfunction()
