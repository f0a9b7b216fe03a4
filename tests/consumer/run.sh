#!/bin/sh
# Installs the built resmon into a scratch prefix, then builds and runs a
# consumer against it three ways: CMake package (shared and static) and
# pkg-config.  Usage: run.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/tests/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib/x86_64-linux-gnu" "$work/build/consumer_shared"
"$work/build/consumer_static"
libdir=$(dirname "$(find "$work/prefix" -name resmon.pc)")
PKG_CONFIG_PATH=$libdir cc "$src/tests/consumer/consumer.c" -o "$work/consumer_pc" \
    $(PKG_CONFIG_PATH=$libdir pkg-config --cflags --libs resmon)
LD_LIBRARY_PATH="$libdir/.." "$work/consumer_pc"
echo "consumer: CMake shared, CMake static and pkg-config builds all ran"
