"""The pull-request comment as a reader sees it.

Renders each `NAME.comment.md` in DOCS with Debian's `cmark-gfm` (GitHub's fork of
cmark) and the extensions GitHub enables (table, strikethrough, autolink, tagfilter),
raw HTML allowed as on GitHub, writes `NAME.comment.html` beside it, and checks the HTML:
the hidden marker survives as a comment, tables render with their header, lists of
more than a few items fold in `<details>`, and nothing from the model's text becomes
markup: no tag, no link, and no `@mention` or `#123` left unescaped in the source
(cmark-gfm does not link those; GitHub does, after rendering, unless they are escaped).

Usage: comment_html.py DOCS   Exit 1 when a check fails.
"""

import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

EXTENSIONS = ["table", "strikethrough", "autolink", "tagfilter"]
# Text the writer test puts in model-written fields (crates/report/tests/formats.rs).
MODEL_HTML = ["<img", "<summary>raw"]
MODEL_REFERENCES = ["@admin", "#123"]
ZWSP = "\u200b"


class Shape(HTMLParser):
    """Counts tags, comments and link texts of one rendered comment."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: dict[str, int] = {}
        self.comments: list[str] = []
        self.links: list[str] = []
        self.summaries: list[str] = []
        self.header_cells = 0
        self._in = {"a": 0, "summary": 0, "thead": 0}

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag in self._in:
            self._in[tag] += 1
            if tag == "a":
                self.links.append(dict(attrs).get("href", ""))
            if tag == "summary":
                self.summaries.append("")
        if tag == "th" and self._in["thead"]:
            self.header_cells += 1

    def handle_endtag(self, tag):
        if tag in self._in and self._in[tag]:
            self._in[tag] -= 1

    def handle_comment(self, data):
        self.comments.append(data.strip())

    def handle_data(self, data):
        if self._in["summary"]:
            self.summaries[-1] += data


def render(markdown: Path) -> str:
    args = ["cmark-gfm", "--unsafe", "--to", "html"]
    for extension in EXTENSIONS:
        args += ["-e", extension]
    return subprocess.run(args + [str(markdown)], capture_output=True, text=True,
                          check=True, timeout=60).stdout


def problems(name: str, source: str, html: str) -> list[str]:
    shape = Shape()
    shape.feed(html)
    found = []
    if "vouch:summary" not in shape.comments:
        found.append("the hidden marker <!-- vouch:summary --> is not an HTML comment")
    if shape.tags.get("h1", 0) != 1:
        found.append(f"{shape.tags.get('h1', 0)} top-level headings, expected 1")
    if shape.tags.get("table", 0) < 1 or shape.header_cells < 2:
        found.append("the stages table does not render as a table with a header row")
    for text in MODEL_HTML:
        if text in html:
            found.append(f"model text became markup: {text!r} in the HTML")
    if shape.tags.get("img") or shape.tags.get("script"):
        found.append("an <img> or <script> element rendered")
    if shape.links:
        found.append(f"links rendered (none is vouch's own): {shape.links}")
    if name == "findings":
        if shape.tags.get("details") != 1 or shape.summaries != ["6 citations"]:
            found.append(f"expected one <details> folding 6 citations, got {shape.summaries}")
        # An escaped `@` is followed by a zero-width space (no mention, no e-mail link);
        # the text reads the same without it.
        for reference in MODEL_REFERENCES:
            escaped = "\\" + reference.replace("@", "@" + ZWSP)
            if escaped not in source:
                found.append(f"{reference} from model text is not escaped in the Markdown")
            if reference not in html.replace(ZWSP, ""):
                found.append(f"{reference} from model text no longer reads as text")
            if "@" in reference and 'href="mailto:' in html:
                found.append(f"{reference}: an e-mail link was rendered from model text")
        if "&lt;img src=x onerror=alert(1)&gt;" not in html:
            found.append("the model's <img> tag does not read as text")
    return found


def main():
    docs = Path(sys.argv[1])
    comments = sorted(docs.glob("*.comment.md"))
    if len(comments) != 3:
        print(f"FAIL: expected 3 comments in {docs}, found {[c.name for c in comments]}")
        raise SystemExit(1)
    failed = 0
    for markdown in comments:
        name = markdown.name.removesuffix(".comment.md")
        html = render(markdown)
        markdown.with_suffix(".html").write_text(html)
        found = problems(name, markdown.read_text(), html)
        failed += bool(found)
        for problem in found:
            print(f"FAIL {name}: {problem}")
        if not found:
            print(f"ok {name}: marker, heading, table, folds and escapes as expected")
    print(f"comment: {len(comments) - failed} passed, {failed} failed")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
