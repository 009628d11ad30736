# The installed package: every install rule of the project, in one place. A downstream project does
#   find_package(TensorClass CONFIG REQUIRED)
#   tensorclass_generate(TARGET app SCHEMAS my.yaml)   # links TensorClass::runtime
#   target_link_libraries(app PRIVATE TensorClass::llm) # History, RewardData, PairwiseDataset
#   target_link_libraries(app PRIVATE TensorClass::nn)  # TensorDictModule, TorchScript bridge
#   target_link_libraries(app PRIVATE TensorClass::store)  # TensorDicts in Redis (when built)
# Layout under the prefix:
#   include/tensordict/            the runtime's headers, nn/ (TensorClass::nn), llm/
#                                  (TensorClass::llm; and distributed.h with
#                                  TensorClass::distributed, store.h with TensorClass::store, when
#                                  built)
#   include/tensorclass/llm/       the llm headers' former paths, forwarding (kept one release)
#   include/tensorclass/generated/ the headers tcgen makes of schemas/ (history.h, reward.h, ...)
#   share/tensorclass/schemas/     the shipped schemas, for `include:` from users' schemas
#   lib/cmake/TensorClass/         package config, targets, tensorclass_generate()
include(CMakePackageConfigHelpers)

set(TC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/TensorClass)
set(TC_INSTALL_SCHEMADIR ${CMAKE_INSTALL_DATADIR}/tensorclass/schemas)

install(TARGETS tensordict tensorclass_nn tensorclass_llm EXPORT TensorClassTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/ ${TC_RUNTIME_GENERATED_INCLUDE}/
                  ${PROJECT_SOURCE_DIR}/nn/include/
                  ${PROJECT_SOURCE_DIR}/llm/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET tensorclass_distributed)
  install(TARGETS tensorclass_distributed EXPORT TensorClassTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/distributed/include/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
if(TARGET tensorclass_store)
  install(TARGETS tensorclass_store EXPORT TensorClassTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/store/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
file(GLOB TC_SHIPPED_HEADERS ${PROJECT_SOURCE_DIR}/generated/*.h)
install(FILES ${TC_SHIPPED_HEADERS} DESTINATION ${TC_INSTALL_GENERATED_INCLUDEDIR})
file(GLOB TC_SHIPPED_SCHEMA_FILES ${PROJECT_SOURCE_DIR}/schemas/*.yaml)
install(FILES ${TC_SHIPPED_SCHEMA_FILES} DESTINATION ${TC_INSTALL_SCHEMADIR})
if(TARGET tcgen)
  install(TARGETS tcgen EXPORT TensorClassTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/TensorClassGenerate.cmake
          DESTINATION ${TC_INSTALL_CMAKEDIR})
endif()

install(EXPORT TensorClassTargets NAMESPACE TensorClass:: DESTINATION ${TC_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TensorClassConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TensorClassConfig.cmake INSTALL_DESTINATION ${TC_INSTALL_CMAKEDIR}
  PATH_VARS TC_INSTALL_SCHEMADIR TC_INSTALL_GENERATED_INCLUDEDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TensorClassConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TensorClassConfig.cmake
              ${PROJECT_BINARY_DIR}/TensorClassConfigVersion.cmake
        DESTINATION ${TC_INSTALL_CMAKEDIR})

# `tc_package`: every target the rules above install, so that `cmake --install` works after
# building it alone (scripts/run.sh builds it and installs into install/).
add_custom_target(tc_package)
foreach(target tensordict tensorclass_nn tensorclass_llm tensorclass_distributed tensorclass_store
               tcgen tdtool)
  if(TARGET ${target})
    add_dependencies(tc_package ${target})
  endif()
endforeach()
