# Helpers shared by every attn library and tool.

# attn libraries link the MLIR dylib (see the top-level CMakeLists.txt): list
# MLIR dependencies under MLIR_LIBS so that add_mlir_library swaps them for
# libMLIR.so.
function(add_attn_library name)
  add_mlir_library(${name} ${ARGN} DISABLE_INSTALL)
endfunction()

function(add_attn_tool name)
  add_llvm_executable(${name} ${ARGN})
  llvm_update_compile_flags(${name})
endfunction()
