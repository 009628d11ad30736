# bench_tensorclass: typed tensorclass access vs a plain struct, construction, tcgen throughput.
# Included by bench/CMakeLists.txt.
if(TARGET tcgen)
  add_executable(bench_tensorclass ${CMAKE_CURRENT_SOURCE_DIR}/bench_tensorclass.cpp)
  tensorclass_generate(TARGET bench_tensorclass
                       SCHEMAS ${CMAKE_CURRENT_SOURCE_DIR}/tensorclass_bench.yaml)
  target_link_libraries(bench_tensorclass PRIVATE tensordict tcgen_lib_yaml benchmark::benchmark
                                                  tc_warnings)
endif()

# Compile cost of the headers users include (CPU s per translation unit, ratio to ATen alone):
#   cmake --build build --target bench_compile_time
if(TARGET bench_tensorclass)
  # The compiler's own system dirs must not be re-added with -isystem (breaks #include_next).
  set(tc_torch_includes "")
  foreach(dir ${TORCH_INCLUDE_DIRS})
    if(NOT dir STREQUAL "/usr/include")
      list(APPEND tc_torch_includes -isystem ${dir})
    endif()
  endforeach()
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  add_custom_target(bench_compile_time
    COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/compile_time.py
            --cxx ${CMAKE_CXX_COMPILER} --runs 3 -- -std=c++17 -O2
            -I${PROJECT_SOURCE_DIR}/runtime/include -I${TC_RUNTIME_GENERATED_INCLUDE}
            -I${PROJECT_SOURCE_DIR}/generated
            ${tc_torch_includes}
    VERBATIM)
  # tcgen reading an annotated header that includes libtorch vs compiling it:
  #   cmake --build build --target bench_clang_reader
  add_custom_target(bench_clang_reader
    COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/clang_reader_time.py
            --tcgen $<TARGET_FILE:tcgen> --cxx ${CMAKE_CXX_COMPILER} --runs 5 -- -std=c++17
            -I${PROJECT_SOURCE_DIR}/runtime/include ${tc_torch_includes}
    DEPENDS tcgen
    VERBATIM)
endif()
