#!/usr/bin/env bash
# The VM's unsafe paths under AddressSanitizer: the Miri suite
# (`vm/tests/miri.rs`) and the golden programs (`tests/golden.rs`), each in
# both dispatch modes (with the fast path, and with every instruction in
# the general loop). Needs the nightly toolchain (`-Zsanitizer` is
# unstable); the standard library is not rebuilt with instrumentation, so
# what is checked is the workspace's code and its dependencies'.
#
#   vm/asan.sh            # from anywhere in the repository
#
# The sanitized build has a target directory of its own
# (`target/asan`), so it does not disturb the ordinary one. `--target`
# (the host's) is given so that RUSTFLAGS reach only the code under test,
# not build scripts and procedural macros. From cold it builds the
# workspace and its dependencies instrumented (about 9 minutes of CPU on
# this project's machines); the suites themselves take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="-Zsanitizer=address"
export RUSTDOCFLAGS="-Zsanitizer=address"
target="$(rustc +nightly -vV | sed -n 's/^host: //p')"
for features in "" "--features codemode/no-fast-path"; do
  echo "== AddressSanitizer: miri and golden suites ${features:-(fast path)}"
  # shellcheck disable=SC2086 # `features` is empty or two words.
  cargo +nightly test --target "$target" --target-dir target/asan \
    -p codemode-vm --test miri -p codemode --test golden $features
done
