# The pipeline's unit-test sources, shared by tests/unit/pipeline/CMakeLists.txt and the sanitizer build
# (tests/unit/pipeline/sanitize).
set(GPUSAGE_PIPELINE_TEST_SOURCES transforms_test.cpp decode_test.cpp decode_formats_test.cpp image_folder_test.cpp
  loader_test.cpp)
