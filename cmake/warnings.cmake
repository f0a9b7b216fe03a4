# The warnings resmon's own code is held to.  They are set per target, never
# with add_compile_options, so a project that includes resmon with
# add_subdirectory keeps its own warning set.  Warnings are errors only where
# someone asks for it: CMake's CMAKE_COMPILE_WARNING_AS_ERROR=ON (scripts/test
# sets it); a user's newer compiler with a new warning must not break a build.
function(resmon_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes -Wmissing-prototypes>)
endfunction()
