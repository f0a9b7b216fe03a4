#!/bin/sh
# Builds tests/subproject (a parent with -Wpedantic -Werror that
# add_subdirectory()s resmon) twice and checks what resmon must not change:
#   1. no build type given: the parent's cache keeps it empty (resmon's
#      RelWithDebInfo default is for top-level builds only); shared library;
#   2. Debug, static library (the parent's BUILD_SHARED_LIBS is off): the
#      parent's asserts stay on;
# and in both, `cmake --install` of the parent installs the parent's program
# and nothing of resmon's.  Usage: run.sh SOURCE_DIR C_COMPILER
set -eu
src=$1
cc=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "subproject: $*" >&2; exit 1; }

check() { # name, expected build type, expected assert state, cmake args...
    name=$1 build_type=$2 asserts=$3
    shift 3
    cmake -S "$src/tests/subproject" -B "$work/$name" -G Ninja -DCMAKE_C_COMPILER="$cc" \
        -DRESMON_SOURCE_DIR="$src" "$@" >/dev/null
    cmake --build "$work/$name" >"$work/$name.log" 2>&1 || {
        cat "$work/$name.log" >&2
        fail "$name: resmon does not build inside a -Wpedantic -Werror parent"
    }
    got=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$work/$name/CMakeCache.txt")
    [ "$got" = "$build_type" ] || fail "$name: the parent's CMAKE_BUILD_TYPE is '$got', expected '$build_type'"
    out=$("$work/$name/parent_app") || fail "$name: parent_app failed"
    [ "$out" = "asserts $asserts" ] || fail "$name: parent_app says '$out', expected 'asserts $asserts'"
    cmake --install "$work/$name" --prefix "$work/$name-prefix" >/dev/null
    installed=$(cd "$work/$name-prefix" && find . -type f | sort | tr '\n' ' ')
    [ "$installed" = "./bin/parent_app " ] || fail "$name: the parent's install put in: $installed"
    echo "subproject: $name ok (build type '$got', asserts $asserts, installs only bin/parent_app)"
}

check shared-default-type "" on -DBUILD_SHARED_LIBS=ON
check static-debug Debug on -DCMAKE_BUILD_TYPE=Debug
