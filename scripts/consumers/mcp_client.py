"""`vouch mcp` as the official MCP Python SDK sees it.

Starts `VOUCH mcp` over stdio with the SDK's own client, initializes, lists the tools,
calls `validate_review_final_report` on a valid and an invalid report (each with its
transcript), and checks every answer equals `vouch validate-report --format json` on
the same files. Prints one line per check and exits non-zero on the first mismatch.

Usage: mcp_client.py VOUCH DATA_DIR  (DATA_DIR: tests/data/final-report)
"""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOL = "validate_review_final_report"


def cases(data: Path):
    """(name, report, transcript, expected exit code) of the reports called."""
    return [
        ("valid", data / "accept/changes-requested.json",
         data / "accept/changes-requested.transcript.jsonl", 0),
        ("invalid", data / "cases/r05-no-merge-call-in-transcript.json",
         data / "accept/changes-requested.transcript.jsonl", 1),
    ]


def cli_verdict(vouch: str, report: Path, transcript: Path) -> dict:
    out = subprocess.run(
        [vouch, "validate-report", str(report), "--transcript", str(transcript),
         "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"validate-report failed ({out.returncode}): {out.stderr}")
    return json.loads(out.stdout)


def fail(message: str):
    print(f"FAIL: {message}")
    raise SystemExit(1)


async def session_checks(vouch: str, data: Path):
    params = StdioServerParameters(command=vouch, args=["mcp"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print(f"ok initialize: server {init.server_info.name} {init.server_info.version}, "
                  f"protocol {init.protocol_version}")
            if init.server_info.name != "vouch" or init.capabilities.tools is None:
                fail(f"unexpected server info or capabilities: {init}")
            tools = (await session.list_tools()).tools
            names = [t.name for t in tools]
            print(f"ok tools/list: {names}")
            if names != [TOOL]:
                fail(f"expected exactly [{TOOL}], got {names}")
            for name, report, transcript, code in cases(data):
                result = await session.call_tool(
                    TOOL, {"reportPath": str(report), "transcriptPath": str(transcript)})
                got = result.structured_content
                want = cli_verdict(vouch, report, transcript)
                if result.is_error:
                    fail(f"{name}: the tool call is an error: {result.content}")
                if got != want:
                    fail(f"{name}: MCP answer differs from validate-report --format json:\n"
                         f"mcp: {json.dumps(got, sort_keys=True)}\n"
                         f"cli: {json.dumps(want, sort_keys=True)}")
                if got.get("exitCode") != code:
                    fail(f"{name}: exitCode {got.get('exitCode')}, expected {code}")
                print(f"ok tools/call {name} report: exitCode {code}, "
                      f"{len(got.get('violations', []))} violation(s), equal to the CLI's JSON")


def main():
    vouch, data = sys.argv[1], Path(sys.argv[2])
    asyncio.run(session_checks(vouch, data))
    print("mcp: 4 passed, 0 failed")


if __name__ == "__main__":
    main()
