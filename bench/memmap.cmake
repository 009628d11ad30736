# bench_memmap: memmap IO against raw writes and torch::save (included by bench/CMakeLists.txt;
# results in docs/performance.md, "Memory-mapped IO").
if(NOT TARGET benchmark::benchmark)
  find_package(benchmark REQUIRED)
endif()
add_executable(bench_memmap ${CMAKE_CURRENT_LIST_DIR}/bench_memmap.cpp)
target_link_libraries(bench_memmap PRIVATE tensordict benchmark::benchmark tc_warnings)
