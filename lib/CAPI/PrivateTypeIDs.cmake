# Copies the static archive IN to OUT with MLIR's TypeID statics
# (TypeIDResolver<T>::resolveTypeID()::id and its guard) renamed, so that
# they stay private to the archive's own code (lib/CAPI/CMakeLists.txt says
# why). cmake -DNM=... -DOBJCOPY=... -DIN=... -DOUT=... -P PrivateTypeIDs.cmake
execute_process(COMMAND ${NM} ${IN} OUTPUT_VARIABLE symbols
                RESULT_VARIABLE rc ERROR_QUIET)
if(rc)
  message(FATAL_ERROR "${NM} ${IN} failed (${rc})")
endif()
string(REGEX MATCHALL "_Z(Z|GVZ)N4mlir6detail14TypeIDResolver[A-Za-z0-9_]*"
       ids "${symbols}")
list(REMOVE_DUPLICATES ids)
set(renames "")
foreach(id ${ids})
  string(APPEND renames "${id} ${id}_attn_capi\n")
endforeach()
file(WRITE ${OUT}.renames "${renames}")
execute_process(COMMAND ${OBJCOPY} --redefine-syms=${OUT}.renames ${IN} ${OUT}
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "${OBJCOPY} --redefine-syms on ${IN} failed (${rc})")
endif()
