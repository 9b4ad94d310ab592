# The input pipeline's own tools (no Google Benchmark: they time whole passes over a folder).
#   make_jpeg_folder     writes an ImageFolder of photo-like JPEGs (wrapped by bench/make-jpeg-folder)
#   pipeline_throughput  one loader or raw-libturbojpeg measurement (run by bench/compare-torchvision)
pkg_check_modules(BENCH_TURBOJPEG REQUIRED IMPORTED_TARGET libturbojpeg)
add_executable(make_jpeg_folder make_jpeg_folder.cpp)
target_link_libraries(make_jpeg_folder PRIVATE gpusage::pipeline CLI11::CLI11 gpusage_warnings)
add_executable(pipeline_throughput pipeline_throughput.cpp)
target_link_libraries(pipeline_throughput PRIVATE gpusage::pipeline CLI11::CLI11 PkgConfig::BENCH_TURBOJPEG
  gpusage_warnings)
