#!/usr/bin/env bash
# Builds what the hardware comparison runs, for one GPU architecture, into a
# folder that can be copied to a GPU machine without the build's Debian
# packages (Boost, fmt, CLI11, Highway...):
#
#   cuda/build-for-device.sh ARCH DIR [PYTHON]   # e.g. 90a-real .hwcarry
#
# DIR gets tools/fmtcheck; tests/cuda/cuda-device, cuda-emulator-sweep and
# cuda-emulator-gemm; and lib/ with the shared libraries they load beyond
# glibc and libstdc++ (libfmt, libhwy). With PYTHON (an interpreter of the GPU
# machine's Python version, nanobind installed in it), DIR/python also gets
# the `fmtcheck` package built for that version, for cuda/torch/
# (PYTHONPATH=DIR/python). Also DIR.tar.xz, the same stripped and compressed
# (the tree and what a call carries travel within 64 MiB): carry it and
# unpack it first on the GPU machine (tar -xJf DIR.tar.xz), then:
# LD_LIBRARY_PATH=DIR/lib cuda/run-hardware-comparison.sh --build DIR --prebuilt. cuBLASLt is not
# copied: hw gemm opens the machine's own libcublasLt.so.MAJOR (put its
# folder on LD_LIBRARY_PATH).
set -euo pipefail
[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: cuda/build-for-device.sh ARCH DIR [PYTHON]" >&2; exit 2; }
arch=$1 dir=$2 python=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-hw-$arch
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFMTCHECK_BUILD_BENCH=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" >/dev/null
ninja -C "$build" fmtcheck-cli cuda-device cuda-emulator-sweep cuda-emulator-gemm >/dev/null
mkdir -p "$dir/tools" "$dir/tests/cuda" "$dir/lib"
cp "$build/tools/fmtcheck" "$dir/tools/"
tests=("$build/tests/cuda/cuda-device" "$build/tests/cuda/cuda-emulator-sweep" "$build/tests/cuda/cuda-emulator-gemm")
cp "${tests[@]}" "$dir/tests/cuda/"
binaries=("$build/tools/fmtcheck" "${tests[@]}")
if [ -n "$python" ]; then
  pybuild=$root/build-hw-python-$("$python" -c 'import sys; print("%d%d" % sys.version_info[:2])')
  # With the emulator's GPU kernels (device="cuda", arrays in CUDA memory): CUDA on whatever an
  # earlier configure of this folder cached.
  cmake -S "$root" -B "$pybuild" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFMTCHECK_BUILD_BENCH=OFF \
    -DFMTCHECK_BUILD_PYTHON=ON -DFMTCHECK_BUILD_TESTS=OFF -DFMTCHECK_BUILD_TOOLS=OFF -DFMTCHECK_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="$arch" -DPython_EXECUTABLE="$python" >/dev/null
  ninja -C "$pybuild" fmtcheck_core >/dev/null
  rm -rf "$dir/python" && mkdir -p "$dir/python" && cp -r "$pybuild/python/fmtcheck" "$dir/python/"
  # A package without the kernels would send every GPU check of cuda/torch/ to "built without CUDA".
  if PYTHONPATH="$dir/python" "$python" -c 'import sys; from fmtcheck import _core
sys.exit("without CUDA" in _core.gpu_unavailable())'; then :; else
    echo "cuda/build-for-device.sh: the package in $dir/python was built without CUDA" >&2; exit 1
  fi
  binaries+=("$dir"/python/fmtcheck/_core*.so)
fi
ldd "${binaries[@]}" | awk '/=> \// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|libdl|librt|libpthread)\.so' | xargs -r cp -L -t "$dir/lib/"
# The tree and what it carries travel within 64 MiB: symbols stripped (the GPU code stays), then one
# xz archive, which the GPU machine unpacks first (tar -xJf DIR.tar.xz).
strip --strip-unneeded "$dir/tools/fmtcheck" "$dir"/tests/cuda/* "$dir"/python/fmtcheck/_core*.so 2>/dev/null || true
tar -C "$(dirname "$dir")" -cJf "$dir.tar.xz" "$(basename "$dir")"
echo "built for $arch into $dir: $(ls "$dir/lib" | tr '\n' ' ')"
echo "carry $dir.tar.xz ($(( $(stat -c %s "$dir.tar.xz") / 1048576 )) MiB) and unpack it there: tar -xJf $dir.tar.xz"
