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

# Links `target` against attn's libraries and Debian's STATIC MLIR and LLVM
# archives instead of libMLIR.so/libLLVM.so, so that it runs where no MLIR
# is installed (the wheel's libattn_compiler.so, attn-run-static for the GPU
# host). One linker pass over every archive in a group pulls just the
# members the target references (--gc-sections drops the rest); of LLVM's
# back ends only NVPTX (the kernels) and the host (X86: the CPU path's and
# the host lowering's JIT) are offered, so a reference to any other fails
# the link instead of growing the binary. LLVM's compression libraries are
# linked statically too where their archives exist (Debian's are
# position-independent): then only libc, libm and libstdc++ remain.
function(attn_link_static_mlir target)
  set(attn_libs MLIRAttnInit MLIRAttnCompiler MLIRAttnExecution
    MLIRAttnPipelines MLIRAttnToGPU MLIRAttnToGPULaunch MLIRAttnGPUToNVVM
    MLIRAttnTransforms MLIRAttnDialect MLIRAttnGPUDialect MLIRAttnGPUUtils
    AttnTuning AttnRuntime AttnKernelAbi AttnSupport)
  set(archives)
  foreach(lib ${attn_libs})
    list(APPEND archives $<TARGET_FILE:${lib}>)
  endforeach()
  file(GLOB mlir_archives ${LLVM_LIBRARY_DIR}/libMLIR*.a)
  file(GLOB llvm_archives ${LLVM_LIBRARY_DIR}/libLLVM*.a)
  foreach(llvm_target ${LLVM_TARGETS_TO_BUILD})
    if(NOT llvm_target MATCHES "^(NVPTX|X86)$")
      list(FILTER llvm_archives EXCLUDE
           REGEX "/libLLVM${llvm_target}[A-Z][^/]*$")
    endif()
  endforeach()
  list(FILTER llvm_archives EXCLUDE REGEX "/libLLVM(BOLT|Exegesis)[^/]*$")
  add_dependencies(${target} ${attn_libs})
  find_program(ATTN_LLD ld.lld)
  if(ATTN_LLD)
    # Much faster than ld.bfd over ~600 archives.
    target_link_options(${target} PRIVATE -fuse-ld=lld)
  endif()
  target_link_options(${target} PRIVATE -Wl,--gc-sections)
  find_library(ATTN_ZLIB_ARCHIVE NAMES libz.a)
  find_library(ATTN_ZSTD_ARCHIVE NAMES libzstd.a)
  set(compression z zstd)
  if(ATTN_ZLIB_ARCHIVE AND ATTN_ZSTD_ARCHIVE)
    set(compression ${ATTN_ZLIB_ARCHIVE} ${ATTN_ZSTD_ARCHIVE})
  endif()
  target_link_libraries(${target} PRIVATE
    -Wl,--start-group ${archives} ${mlir_archives} ${llvm_archives}
    -Wl,--end-group ${compression} ${CMAKE_DL_LIBS} pthread rt m)
endfunction()
