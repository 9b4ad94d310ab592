# The harnesses and what each links, shared by fuzz/CMakeLists.txt (libFuzzer, Clang) and tests/ (the
# GCC build replays the seed corpora and kept crashers through fuzz/replay_main.cpp).
#   gpusage_fuzz_harnesses(callback): calls callback(name source libs defines extra_sources) per harness.
set(GPUSAGE_FUZZ_HARNESSES
  catalog_toml doctor_log doctor_rules hf_config bench_json monitor_log validate_csv batch_list gpu_list
  jpeg_decode png_decode traced_workload)
set(GPUSAGE_FUZZ_catalog_toml_LIBS gpusage::core)
set(GPUSAGE_FUZZ_doctor_log_LIBS gpusage::core)
set(GPUSAGE_FUZZ_doctor_rules_LIBS gpusage::core)
set(GPUSAGE_FUZZ_hf_config_LIBS gpusage::core)
set(GPUSAGE_FUZZ_traced_workload_LIBS gpusage::core)
set(GPUSAGE_FUZZ_bench_json_LIBS gpusage::core)
set(GPUSAGE_FUZZ_monitor_log_LIBS gpusage::report)
set(GPUSAGE_FUZZ_validate_csv_LIBS gpusage::core)
set(GPUSAGE_FUZZ_gpu_list_LIBS gpusage::core)
set(GPUSAGE_FUZZ_batch_list_LIBS gpusage::core)
set(GPUSAGE_FUZZ_jpeg_decode_LIBS gpusage::pipeline)
set(GPUSAGE_FUZZ_png_decode_LIBS gpusage::pipeline)
set(GPUSAGE_FUZZ_png_decode_DEFINES GPUSAGE_FUZZ_PNG)

function(gpusage_fuzz_source name out)
  if(name MATCHES "_decode$")
    set(${out} ${CMAKE_SOURCE_DIR}/fuzz/image_decode.cpp PARENT_SCOPE)
  else()
    set(${out} ${CMAKE_SOURCE_DIR}/fuzz/${name}.cpp PARENT_SCOPE)
  endif()
endfunction()
