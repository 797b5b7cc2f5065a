"""The README stays short and opens with the two commands; every page of docs/ is linked from
it; no relative link in the README or in docs/ points at a file or heading that is not there."""

from __future__ import annotations

import re
from pathlib import Path

from cudaopt import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_LINES = 300
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def _prose(text: str) -> str:
    """The text outside fenced code blocks (a `# comment` in a code block is no heading)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _links(page: Path) -> list[str]:
    text = re.sub(r"`[^`\n]*`", "", _prose(page.read_text()))  # inline code is no link either
    return LINK.findall(text)


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    anchors = set()
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*$", _prose(page.read_text()), re.M):
        anchor = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        anchors.add(anchor)
    return anchors


def test_the_readme_is_at_most_300_lines() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_README_LINES, \
        f"README.md has {len(lines)} lines; move detail to a page in docs/"


def test_the_readme_opens_with_the_two_commands() -> None:
    """`.ci/run` takes the test command from the second line after its marker
    (`sed -n '/<!-- test-command -->/{n;n;p;q}'`); both blocks come before any section."""
    lines = README.read_text().splitlines()
    first_section = next(i for i, line in enumerate(lines) if line.startswith("## "))
    for marker, command in (("<!-- test-command -->", "python3 -m pip install "),
                            ("<!-- main-command -->", "cudaopt optimize ")):
        assert marker in lines, f"{marker} is missing from the README"
        at = lines.index(marker)
        assert at < first_section, f"{marker} comes after the first section"
        block = lines[at + 1:at + 4]
        assert block[0] == "```bash" and block[2] == "```", f"{marker}: {block}"
        assert block[1].startswith(command), f"{marker}: {block[1]}"
    test = lines[lines.index("<!-- test-command -->") + 2]
    assert "pytest" in test, test
    main = lines[lines.index("<!-- main-command -->") + 2]
    assert "--model replay:" in main, main
    assert lines.index("<!-- test-command -->") < lines.index("<!-- main-command -->")
    prose = [line for line in lines[1:lines.index("<!-- test-command -->")] if line.strip()]
    assert len(prose) <= 6, "only the short description comes before the two commands"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    pages = _pages()
    assert pages, "docs/ holds no pages"
    linked = {(README.parent / link.split("#")[0]).resolve()
              for link in _links(README) if not re.match(r"\w+:", link)}
    missing = [p.relative_to(ROOT).as_posix() for p in pages if p.resolve() not in linked]
    assert not missing, f"pages the README does not link: {missing}"


def test_every_relative_link_resolves() -> None:
    broken = []
    for page in [README, *_pages()]:
        for link in _links(page):
            if re.match(r"\w+:", link):  # http:, https:, mailto:
                continue
            target, _, anchor = link.partition("#")
            path = (page.parent / target).resolve() if target else page
            where = f"{page.relative_to(ROOT).as_posix()}: {link}"
            if not path.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{where} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_checks_see_links_and_anchors(tmp_path: Path) -> None:
    """The helpers find what a broken page would hold, so the tests above can fail."""
    page = tmp_path / "page.md"
    page.write_text("# A page: `x`, and more\n\nSee [b](other.md#a-heading) and `[c](no.md)`.\n"
                    "```bash\n# not a heading\n```\n")
    assert _links(page) == ["other.md#a-heading"]
    assert _anchors(page) == {"a-page-x-and-more"}
