# Installs tcgen, the CMake function and a package config, and exports the runtime as
# TensorClass::runtime, so a downstream project does:
#   find_package(TensorClass CONFIG REQUIRED)
#   tensorclass_generate(TARGET app SCHEMAS my.yaml)
#   target_link_libraries(app PRIVATE TensorClass::runtime)
include(CMakePackageConfigHelpers)

set(TC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/TensorClass)

# tc_warnings only reaches the export as a link-only dependency of the static libraries (it
# carries compile options, no library), but CMake needs it in the export set.
install(TARGETS tc_warnings EXPORT TensorClassTargets)
install(TARGETS tcgen EXPORT TensorClassTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT TensorClassTargets NAMESPACE TensorClass:: DESTINATION ${TC_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TensorClassConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TensorClassConfig.cmake INSTALL_DESTINATION ${TC_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TensorClassConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TensorClassConfig.cmake
              ${PROJECT_BINARY_DIR}/TensorClassConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TensorClassGenerate.cmake
        DESTINATION ${TC_INSTALL_CMAKEDIR})
