# bench_lazy: History batches as lazy stacks and dense non-tensor stacks at scale.
# Included by bench/CMakeLists.txt.
if(TARGET tensorclass_llm)
  add_executable(bench_lazy ${CMAKE_CURRENT_SOURCE_DIR}/bench_lazy.cpp)
  target_link_libraries(bench_lazy PRIVATE tensorclass_llm benchmark::benchmark tc_warnings)
endif()
