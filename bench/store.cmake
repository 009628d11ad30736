# bench_store: TensorDictStore (TensorClass::store) against raw hiredis SET/GET of the same bytes on
# one redis-server over TCP loopback (included by bench/CMakeLists.txt; results in
# docs/performance.md, "Store (Redis)"; bench/store_vs_python.sh adds Python's TensorDictStore).
if(TARGET tensorclass_store)
  if(NOT TARGET benchmark::benchmark)
    find_package(benchmark REQUIRED)
  endif()
  add_executable(bench_store ${CMAKE_CURRENT_LIST_DIR}/bench_store.cpp
                             ${CMAKE_CURRENT_LIST_DIR}/store_baselines.cpp)
  # The raw twin talks to hiredis itself: the imported target the top-level CMakeLists.txt makes.
  target_link_libraries(bench_store PRIVATE tensorclass_store tc_store_testing
                                            TensorClass::hiredis benchmark::benchmark tc_warnings)
endif()
