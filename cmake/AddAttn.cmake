# Helpers shared by every attn library and tool.
include_guard(GLOBAL)

include(GNUInstallDirs)

# attn's own export set: `cmake --install` writes it as
# lib/cmake/AttnCompiler/AttnCompilerTargets.cmake (see AttnInstall.cmake).
# add_mlir_library would put our libraries into MLIR's export set, hence
# DISABLE_INSTALL there and our own rule here (as CIRCT's add_circt_library).
function(attn_install_library name)
  get_property(exported GLOBAL PROPERTY ATTN_EXPORTED_TARGETS)
  if(name IN_LIST exported)
    return()
  endif()
  install(TARGETS ${name} EXPORT AttnCompilerTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT attn-libraries
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT attn-libraries
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT attn-libraries
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set_property(GLOBAL APPEND PROPERTY ATTN_EXPORTED_TARGETS ${name})
endfunction()

# attn libraries link the MLIR dylib (see the top-level CMakeLists.txt): list
# MLIR dependencies under MLIR_LIBS so that add_mlir_library swaps them for
# libMLIR.so.
function(add_attn_library name)
  add_mlir_library(${name} ${ARGN} DISABLE_INSTALL)
  attn_install_library(${name})
  attn_install_rpath(${name})
endfunction()

function(add_attn_tool name)
  add_llvm_executable(${name} ${ARGN})
  llvm_update_compile_flags(${name})
  attn_install_rpath(${name})
  install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          COMPONENT attn-tools)
endfunction()

# Installed binaries load libMLIR.so / libLLVM.so from the MLIR they were
# built against: Debian's /usr/lib/llvm-22/lib is not on the loader's path,
# and LLVM's rpath set-up only adds it when LLVM_INSTALL_PREFIX is known.
function(attn_install_rpath name)
  set_property(TARGET ${name} APPEND PROPERTY INSTALL_RPATH
               "${LLVM_LIBRARY_DIR}")
endfunction()
