#!/bin/sh
# Regenerates fixture.bundle from the trees under stages/, deterministically: fixed
# identity and dates, no user or system git configuration, single-threaded packing.
# Usage: tests/data/fixture-repo/make.sh   (prints the SHAs to put in README.md and in
# crates/testkit/src/git.rs if they ever change).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
stages="$here/stages"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME="Ada Fixture" GIT_AUTHOR_EMAIL="ada@fixture.invalid"
export GIT_COMMITTER_NAME="Ada Fixture" GIT_COMMITTER_EMAIL="ada@fixture.invalid"
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE 2>/dev/null || true

g() { git -C "$work" -c core.autocrlf=false -c commit.gpgsign=false -c core.hooksPath=/dev/null "$@"; }

# commit DAY MESSAGE: commits what is staged, dated 2024-03-DAY 09:00 UTC.
commit() {
    GIT_AUTHOR_DATE="2024-03-$1T09:00:00+00:00" GIT_COMMITTER_DATE="2024-03-$1T09:00:00+00:00" \
        g commit -q --no-verify -m "$2"
}

# stage NAME: copies a stage's files over the working tree and stages everything.
stage() {
    cp -R "$stages/$1/." "$work/"
    g add -A
}

g init -q -b main

stage 1-initial
commit 01 "Add token-bucket and sliding-window rate limiters"

stage 2-thread-safety-docs
commit 04 "Document that the limiters are thread-safe"

g checkout -q -b feature
g mv ratelimit/clock.py ratelimit/clocks.py
stage 3-rename-clock
commit 05 "Rename ratelimit.clock to ratelimit.clocks; clocks can sleep

A clock now waits on its own time source, so code that has to wait can be
tested with ManualClock without real sleeps."

g rm -q examples/demo.py
stage 4-blocking-acquire
commit 06 "Add TokenBucket.acquire() with a timeout

Callers that would rather wait for capacity than fail fast can now block
until tokens are available, for at most the given timeout. try_acquire()
shares the new _take() helper. The outdated example is removed: it imported
the old ratelimit.clock module."

g checkout -q main
stage 5-release-0.3.1
commit 07 "Release 0.3.1"

g -c pack.threads=1 bundle create -q "$here/fixture.bundle" HEAD main feature
echo "base (main):        $(g rev-parse main)"
echo "merge base:         $(g merge-base main feature)"
echo "head (feature):     $(g rev-parse feature)"
