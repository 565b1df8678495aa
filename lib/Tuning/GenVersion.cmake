# Writes OUTPUT = `#define ATTN_COMPILER_VERSION "<git describe>"`, touching
# it only when the text changes (so an unchanged version rebuilds nothing).
execute_process(
  COMMAND git describe --always --dirty --tags
  WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR version STREQUAL "")
  set(version "unknown")
endif()
set(text "#define ATTN_COMPILER_VERSION \"${version}\"\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUTPUT} "${text}")
endif()
