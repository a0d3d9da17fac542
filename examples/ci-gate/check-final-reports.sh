#!/bin/sh
# check-final-reports.sh: CI gate for review final reports.
#
# Validates every final report in a directory (`*.json` and `*.md`, not recursive)
# with `vouch validate-report`. A report `NAME.json` or `NAME.md` is checked against
# the transcript `NAME.transcript.jsonl` when that file exists. Prints each invalid
# report with its violations (as GitHub/Gitea Actions `::error` annotations when
# GITHUB_ACTIONS=true) and exits 1 if any report is invalid or unreadable, 0 otherwise.
#
# Usage: check-final-reports.sh [DIR]     (default DIR: final-reports)
# Environment: VOUCH_BIN (default: vouch on PATH)

set -u

vouch=${VOUCH_BIN:-vouch}
dir=${1:-final-reports}

if [ ! -d "$dir" ]; then
    echo "no report directory: $dir" >&2
    exit 1
fi

checked=0
failed=0
for report in "$dir"/*.json "$dir"/*.md; do
    [ -f "$report" ] || continue
    stem=${report%.*}
    transcript="$stem.transcript.jsonl"
    checked=$((checked + 1))
    if [ -f "$transcript" ]; then
        output=$("$vouch" validate-report "$report" --transcript "$transcript" 2>&1)
    else
        output=$("$vouch" validate-report "$report" 2>&1)
    fi
    status=$?
    if [ "$status" -eq 0 ]; then
        echo "ok      $report"
        continue
    fi
    failed=$((failed + 1))
    echo "INVALID $report (exit $status)"
    echo "$output" | while IFS= read -r line; do
        if [ "${GITHUB_ACTIONS:-}" = "true" ]; then
            echo "::error file=$report::$line"
        else
            echo "    $line"
        fi
    done
done

if [ "$checked" -eq 0 ]; then
    echo "no final reports in $dir" >&2
    exit 1
fi
echo "$checked report(s) checked, $failed invalid"
[ "$failed" -eq 0 ]
