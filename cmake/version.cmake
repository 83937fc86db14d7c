# Records the commgauge version and the git revision of the source tree in a generated header,
# so every JSON result can say which code produced it.
find_package(Git QUIET)
set(COMMGAUGE_GIT_REVISION "unknown")
if(GIT_FOUND AND EXISTS "${PROJECT_SOURCE_DIR}/.git")
  execute_process(
    COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --abbrev=12
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    OUTPUT_VARIABLE COMMGAUGE_GIT_REVISION
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT COMMGAUGE_GIT_REVISION)
    set(COMMGAUGE_GIT_REVISION "unknown")
  endif()
endif()
configure_file("${PROJECT_SOURCE_DIR}/src/common/version.hpp.in"
               "${PROJECT_BINARY_DIR}/generated/commgauge/version.hpp" @ONLY)
