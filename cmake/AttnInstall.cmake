# The installed package: `cmake --install <build> --prefix <p>` gives
#   <p>/include/attn, <p>/include/attn-c   public headers, .td files and the
#                                          generated .inc files
#   <p>/lib                                the libraries (add_attn_library and
#                                          the MLIR-free support/runtime ones)
#   <p>/lib/cmake/AttnCompiler             AttnCompilerConfig.cmake, version
#                                          file and the export set
# so that a downstream project can `find_package(AttnCompiler CONFIG)`.
# Included last by the top-level CMakeLists.txt, once every target exists.

include(CMakePackageConfigHelpers)
include(GNUInstallDirs)
include(${CMAKE_CURRENT_LIST_DIR}/AddAttn.cmake)

set(ATTN_PACKAGE_VERSION ${PROJECT_VERSION})
set(ATTN_INSTALL_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/AttnCompiler)

# Headers and .td files, from the source tree.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/attn
                  ${PROJECT_SOURCE_DIR}/include/attn-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT attn-headers
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")

if(ATTN_ENABLE_COMPILER)
  # Generated declarations (.h.inc, .cpp.inc) next to the headers that
  # include them.
  install(DIRECTORY ${PROJECT_BINARY_DIR}/include/attn
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT attn-headers
    FILES_MATCHING PATTERN "*.inc"
    PATTERN "CMakeFiles" EXCLUDE)
endif()

# The MLIR-free libraries are plain add_library targets (lib/Support,
# lib/Runtime, lib/Tuning); they join the same export set from here.
foreach(target AttnSupport AttnKernelAbi AttnRuntime AttnTuning attn_runtime attn_mgpu)
  if(TARGET ${target})
    attn_install_library(${target})
  endif()
endforeach()
# The MLIR-free tools (plain add_executable, like the libraries above).
foreach(tool attn-launch attn-tune)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
            COMPONENT attn-tools)
  endif()
endforeach()

install(EXPORT AttnCompilerTargets
  FILE AttnCompilerTargets.cmake
  DESTINATION ${ATTN_INSTALL_PACKAGE_DIR} COMPONENT attn-cmake)

get_property(ATTN_EXPORTED_TARGETS GLOBAL PROPERTY ATTN_EXPORTED_TARGETS)
set(ATTN_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/AttnCompilerConfig.cmake.in
  ${PROJECT_BINARY_DIR}/${ATTN_INSTALL_PACKAGE_DIR}/AttnCompilerConfig.cmake
  INSTALL_DESTINATION ${ATTN_INSTALL_PACKAGE_DIR}
  PATH_VARS ATTN_INSTALL_INCLUDEDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/${ATTN_INSTALL_PACKAGE_DIR}/AttnCompilerConfigVersion.cmake
  VERSION ${ATTN_PACKAGE_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/${ATTN_INSTALL_PACKAGE_DIR}/AttnCompilerConfig.cmake
  ${PROJECT_BINARY_DIR}/${ATTN_INSTALL_PACKAGE_DIR}/AttnCompilerConfigVersion.cmake
  DESTINATION ${ATTN_INSTALL_PACKAGE_DIR} COMPONENT attn-cmake)
