#!/bin/sh
# Installs the built resmon into a scratch prefix, then builds and runs a
# consumer against it: CMake package (shared and static), pkg-config, and
# both again where Jansson's .pc is hidden (a user of the shared library does
# not need Jansson's development files).  Usage: run.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for page in share/man/man1/resmon.1 share/bash-completion/completions/resmon; do
    [ -f "$work/prefix/$page" ] || { echo "consumer: the install lacks $page" >&2; exit 1; }
done
libdir=$(dirname "$(dirname "$(find "$work/prefix" -name resmon.pc)")")
export LD_LIBRARY_PATH="$libdir"

cmake -S "$src/tests/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer_shared"
"$work/build/consumer_static"
PKG_CONFIG_PATH=$libdir/pkgconfig cc "$src/tests/consumer/consumer.c" -o "$work/consumer_pc" \
    $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs resmon)
"$work/consumer_pc"

# PKG_CONFIG_LIBDIR replaces the system's .pc directories: only resmon's is seen.
export PKG_CONFIG_LIBDIR="$libdir/pkgconfig"
if pkg-config --exists jansson; then
    echo "consumer: jansson.pc is still visible, the test cannot hide it" >&2
    exit 1
fi
cmake -S "$src/tests/consumer" -B "$work/build-nojansson" -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DWITHOUT_JANSSON=ON >/dev/null
cmake --build "$work/build-nojansson" >/dev/null
"$work/build-nojansson/consumer_shared"
cc "$src/tests/consumer/consumer.c" -o "$work/consumer_pc_nojansson" $(pkg-config --cflags --libs resmon)
"$work/consumer_pc_nojansson"
echo "consumer: CMake shared and static, pkg-config, and both without Jansson's .pc all ran"
