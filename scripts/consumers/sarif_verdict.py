"""Reads the SARIF log that `Sarif.Multitool validate` wrote about vouch's documents.

Every result is listed. An error-level result fails, except the one rejection vouch
wants (docs/consumers.md): GitHub's ingestion rule GH1014 on the incomplete review and
the failure document, whose runs carry no `results` so that an upload can never close
the alerts a completed review opened. That rejection must happen: its absence fails
too. A warning fails unless its rule is one docs/consumers.md explains.

Usage: sarif_verdict.py VALIDATION.sarif   Exit 1 when a check fails.
"""

import json
import sys
from collections import Counter
from pathlib import PurePath

EXPECTED_ERRORS = {("GH1014", "incomplete.sarif"), ("GH1014", "failure.sarif")}
# Each explained in docs/consumers.md, "SARIF".
EXPLAINED_WARNINGS = {"SARIF2005", "SARIF2017"}


def describe(result: dict) -> str:
    """Where the result points, and the arguments of its message."""
    message = result["message"]
    return message.get("text") or "; ".join(message.get("arguments", []))


def main():
    log = json.load(open(sys.argv[1], encoding="utf-8-sig"))
    results = log["runs"][0].get("results", [])
    seen = Counter()
    failures = []
    for result in results:
        level = result.get("level", "warning")
        rule = result["ruleId"]
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        name = PurePath(uri).name
        seen[(level, rule, name)] += 1
        if level == "error" and (rule, name) not in EXPECTED_ERRORS:
            failures.append(f"error {rule} in {name}: {describe(result)}")
        if level == "warning" and rule not in EXPLAINED_WARNINGS:
            failures.append(f"unexplained warning {rule} in {name}: {describe(result)}")
    for (level, rule, name), count in sorted(seen.items()):
        print(f"  {level:7} {rule:10} {name:16} x{count}")
    for rule, name in sorted(EXPECTED_ERRORS):
        if not seen[("error", rule, name)]:
            failures.append(f"the expected rejection {rule} of {name} did not happen")
    for failure in failures:
        print(f"FAIL: {failure}")
    verdict = "rejected" if failures else "accepted (only the expected rejections)"
    print(f"sarif-multitool: {len(results)} result(s); {verdict}")
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
