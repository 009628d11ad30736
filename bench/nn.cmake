# bench_nn: TensorClass::nn (TensorDictModule over torch::nn and TorchScript, BatchRunner) against
# the same work done by hand (included by bench/CMakeLists.txt; results in docs/performance.md,
# "Models (TensorClass::nn)").
if(TARGET tensorclass_nn)
  add_executable(bench_nn ${CMAKE_CURRENT_LIST_DIR}/bench_nn.cpp)
  target_link_libraries(bench_nn PRIVATE tensorclass_nn benchmark::benchmark tc_warnings)
endif()
