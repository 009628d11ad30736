# bench_checkpoint: a ~100 MB MLP checkpointed with memmap vs torch::save/load; bench_distributed:
# send/recv of a 64 MB TensorDict between two processes vs raw c10d (included by
# bench/CMakeLists.txt; results in docs/performance.md, "Checkpoints" and "Distributed").
if(NOT TARGET benchmark::benchmark)
  find_package(benchmark REQUIRED)
endif()
add_executable(bench_checkpoint ${CMAKE_CURRENT_LIST_DIR}/bench_checkpoint.cpp)
target_link_libraries(bench_checkpoint PRIVATE tensordict benchmark::benchmark tc_warnings)
if(TARGET tensorclass_distributed)
  add_executable(bench_distributed ${CMAKE_CURRENT_LIST_DIR}/bench_distributed.cpp)
  target_link_libraries(bench_distributed PRIVATE tensorclass_distributed benchmark::benchmark
                                                  tc_warnings)
endif()
