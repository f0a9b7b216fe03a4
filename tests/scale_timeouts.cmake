# Included by ctest (TEST_INCLUDE_FILES, tests/CMakeLists.txt) before the
# tests of this directory are declared: scales each TIMEOUT they declare by
# RESMON_TEST_TIME_FACTOR, read when ctest runs, as the waits inside the tests
# scale (scripts/test chooses the factor from the load at that moment; a test
# whose waits grow tenfold needs ten times its limit).  A fractional factor is
# rounded up; one that is not a number from 1 to 1000 counts as 1 (the tests
# themselves refuse it).
#
# The limits are safety nets against a hang, not bounds on speed, and load
# may arrive after the factor was chosen: a factor of 1 chosen on a quiet
# machine then meets six busy loops and other builds (test_monitor took over
# its 120 s at load 16 on two cores, at 5 % of a CPU).  So a limit is never
# scaled by less than 5: a hang costs a few minutes more, a loaded run stays
# green.
set(_resmon_load_margin 5)
set(_resmon_factor "$ENV{RESMON_TEST_TIME_FACTOR}")
if(_resmon_factor MATCHES "^([0-9]+)(\\.([0-9]*))?$")
  set(_resmon_factor "${CMAKE_MATCH_1}")
  if("${CMAKE_MATCH_3}" MATCHES "[1-9]")
    math(EXPR _resmon_factor "${_resmon_factor} + 1")
  endif()
  if(_resmon_factor LESS 1 OR _resmon_factor GREATER 1000)
    set(_resmon_factor 1)
  endif()
else()
  set(_resmon_factor 1)
endif()
if(_resmon_factor LESS _resmon_load_margin)
  set(_resmon_factor ${_resmon_load_margin})
endif()

# ctest's own set_tests_properties, with each TIMEOUT scaled.  Every value
# is passed on quoted, one property at a time, so a list value (ENVIRONMENT)
# keeps its semicolons.
function(set_tests_properties)
  set(tests "")
  set(i 0)
  while(i LESS ARGC AND NOT "${ARGV${i}}" STREQUAL "PROPERTIES")
    list(APPEND tests "${ARGV${i}}")
    math(EXPR i "${i} + 1")
  endwhile()
  math(EXPR i "${i} + 1")
  while(i LESS ARGC)
    math(EXPR next "${i} + 1")
    set(name "${ARGV${i}}")
    set(value "${ARGV${next}}")
    if(name STREQUAL "TIMEOUT" AND value MATCHES "^[0-9]+$")
      math(EXPR value "${value} * ${_resmon_factor}")
    endif()
    foreach(test IN LISTS tests)
      _set_tests_properties("${test}" PROPERTIES "${name}" "${value}")
    endforeach()
    math(EXPR i "${i} + 2")
  endwhile()
endfunction()
