# Where bash looks for completions: what bash-completion's .pc says (resolved
# under our own prefix, so a --prefix or DESTDIR install stays inside it), or
# Debian's path when bash-completion is not installed at build time.
set(_resmon_completion_dir ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
if(PKG_CONFIG_EXECUTABLE)
  execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --define-variable=prefix=/resmon-prefix
                          --variable=completionsdir bash-completion
                  OUTPUT_VARIABLE _resmon_pc_completion_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _resmon_pc_result ERROR_QUIET)
  if(_resmon_pc_result EQUAL 0 AND _resmon_pc_completion_dir MATCHES "^/resmon-prefix/(.+)$")
    set(_resmon_completion_dir ${CMAKE_MATCH_1})
  endif()
endif()
set(RESMON_BASH_COMPLETION_DIR ${_resmon_completion_dir} CACHE STRING
    "Where to install the bash completion of resmon (relative: under the install prefix)")
