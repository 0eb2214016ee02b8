# One helper per kind of target, so that every library, executable, test and benchmark is built with
# the same standard, warnings and sanitizer options and none drifts.

function(az_apply_standard_options target)
  target_compile_features(${target} PRIVATE cxx_std_20)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
  if(AZ_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(AZ_NATIVE)
    target_compile_options(${target} PRIVATE -march=native)
  endif()
  if(AZ_SANITIZE STREQUAL "address")
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  elseif(AZ_SANITIZE STREQUAL "fuzzer")
    # libFuzzer builds (clang only; scripts/fuzz): coverage instrumentation everywhere, ASan and
    # UBSan to turn a bad read into a crash; the fuzz targets add libFuzzer's main themselves.
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link,address,undefined
                                             -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  elseif(AZ_SANITIZE STREQUAL "thread")
    target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=thread)
  elseif(NOT AZ_SANITIZE STREQUAL "")
    message(FATAL_ERROR
            "AZ_SANITIZE must be empty, 'address', 'thread' or 'fuzzer', not '${AZ_SANITIZE}'")
  endif()
endfunction()

# az_library(NAME <target> SOURCES ... [DEPS ...] [PRIVATE_DEPS ...])
# Headers are included by path from the source root: #include "core/chess/position.h".
function(az_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SOURCES})
  target_include_directories(${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  set_target_properties(${ARG_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  az_apply_standard_options(${ARG_NAME})
endfunction()

# az_executable(NAME <target> SOURCES ... [DEPS ...]); lands in <build>/bin/.
function(az_executable)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  az_apply_standard_options(${ARG_NAME})
endfunction()

# az_test(NAME <target> SOURCES ... [DEPS ...] [LABEL unit|integration] [TIMEOUT seconds] [SERIAL]
#         [COST seconds])
# Each GoogleTest case becomes its own ctest test, labelled so `ctest -L unit` runs the fast ones.
# SERIAL: ctest runs it alone (a test that measures learning in minutes needs the machine's cores).
# COST: about how long its cases run; ctest starts costly tests first. ctest learns the costs after
# a run, but a clean clone (CI) has none, and a long test started last runs with one core idle.
function(az_test)
  cmake_parse_arguments(ARG "SERIAL" "NAME;LABEL;TIMEOUT;COST" "SOURCES;DEPS" ${ARGN})
  set(serial FALSE)
  if(ARG_SERIAL)
    set(serial TRUE)
  endif()
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(NOT ARG_COST)
    set(ARG_COST 0)
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${ARG_NAME} PRIVATE AZ_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                                 AZ_BINARY_DIR="${CMAKE_BINARY_DIR}")
  az_apply_standard_options(${ARG_NAME})
  # A test's own code at -O1 in Release: it compiles a third faster than at -O3 (most of CI's
  # build is tests), and the code under test is still built as shipped, in its libraries. Header
  # templates instantiated in a test (search, encoders) run slower there; no test measures speed.
  target_compile_options(${ARG_NAME} PRIVATE $<$<CONFIG:Release>:-O1>)
  # Listing a test loads its libraries: LibTorch's 120 MB from a cold page cache took more than
  # CMake's default 5 s on a CI machine, and a failed listing fails the whole ctest run.
  gtest_discover_tests(${ARG_NAME} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 120
                       PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT} RUN_SERIAL ${serial}
                                  COST ${ARG_COST})
endfunction()

# az_benchmark(NAME <target> SOURCES ... [DEPS ...]): Google Benchmark programs, never run by ctest.
function(az_benchmark)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  if(NOT AZ_BUILD_BENCHMARKS)
    return()
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} benchmark::benchmark benchmark::benchmark_main)
  az_apply_standard_options(${ARG_NAME})
endfunction()
