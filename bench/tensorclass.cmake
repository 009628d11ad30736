# bench_tensorclass: typed tensorclass access vs a plain struct, construction, tcgen throughput.
# Included by bench/CMakeLists.txt.
if(TARGET tcgen)
  add_executable(bench_tensorclass ${CMAKE_CURRENT_SOURCE_DIR}/bench_tensorclass.cpp)
  tensorclass_generate(TARGET bench_tensorclass
                       SCHEMAS ${CMAKE_CURRENT_SOURCE_DIR}/tensorclass_bench.yaml)
  target_link_libraries(bench_tensorclass PRIVATE tensordict tcgen_lib benchmark::benchmark
                                                  tc_warnings)
endif()

# Compile time of one generated header against ATen alone:
#   cmake --build build --target bench_tensorclass_compile_time
# prints the elapsed time of compiling each of the two translation units below.
if(TARGET bench_tensorclass)
  # The compiler's own system dirs must not be re-added with -isystem (breaks #include_next).
  set(tc_torch_includes "")
  foreach(dir ${TORCH_INCLUDE_DIRS})
    if(NOT dir STREQUAL "/usr/include")
      list(APPEND tc_torch_includes -isystem ${dir})
    endif()
  endforeach()
  set(tc_compile_flags -std=c++17 -O2 -DTENSORDICT_ABI_VERSION=1
      -I${PROJECT_SOURCE_DIR}/runtime/include -I${PROJECT_SOURCE_DIR}/generated
      ${tc_torch_includes})
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/compile_aten_only.cpp "#include <ATen/ATen.h>\nint main() {}\n")
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/compile_generated.cpp "#include \"reward.h\"\nint main() {}\n")
  add_custom_target(bench_tensorclass_compile_time
    COMMAND ${CMAKE_COMMAND} -E echo "ATen only:"
    COMMAND ${CMAKE_COMMAND} -E time ${CMAKE_CXX_COMPILER} ${tc_compile_flags}
            -fsyntax-only ${CMAKE_CURRENT_BINARY_DIR}/compile_aten_only.cpp
    COMMAND ${CMAKE_COMMAND} -E echo "generated reward.h:"
    COMMAND ${CMAKE_COMMAND} -E time ${CMAKE_CXX_COMPILER} ${tc_compile_flags}
            -fsyntax-only ${CMAKE_CURRENT_BINARY_DIR}/compile_generated.cpp
    VERBATIM)
endif()
