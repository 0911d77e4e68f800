"""The manual holds together: README.md is at most 300 lines; every relative link in README.md,
SECURITY.md and docs/ (pages and man pages aside) points at a file of the repository, and every
`#anchor` at a heading of the target page (GitHub's slugs); the pages carry no internal jargon
(tracker issue numbers, design-document references, "decision D1", profile rules "P5"); no
tracked file refers to the design folder that sits next to the repository (its relative path
or its specs folder); every test reference `file::function` in those pages and in
tests/BAD_INPUT.md names a tracked file that defines that function. Both checkers are first run on
made-up pages with good and broken references, so they cannot pass by finding nothing."""
import os
import re
import subprocess
import sys
import tempfile

from xgtest import SOURCE_DIR

LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
MAX_README_LINES = 300


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces -> '-'."""
    h = heading.strip().lower().replace("`", "")
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def prose_lines(text):
    """The lines outside ``` fences, with inline code spans blanked."""
    out, fence = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fence = not fence
            out.append("")
            continue
        out.append("" if fence else re.sub(r"`[^`]*`", "``", line))
    return out


def anchors(path):
    """The anchors of a page's headings (a repeated heading gets -1, -2, ...)."""
    seen, out = {}, set()
    for line in _heading_lines(path):
        s = slug(line)
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def _heading_lines(path):
    fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fence = not fence
            elif not fence and re.match(r"^#{1,6} ", line):
                yield line.lstrip("#").strip()


def broken_links(path, root):
    """[(line number, target, reason)] for every relative link of `path` that points nowhere."""
    bad = []
    with open(path, encoding="utf-8") as f:
        lines = prose_lines(f.read())
    for no, line in enumerate(lines, 1):
        for m in LINK.finditer(line):
            target = m.group(1) or m.group(2)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part \
                else path
            if not os.path.abspath(dest).startswith(os.path.abspath(root) + os.sep):
                bad.append((no, target, "outside the repository"))
            elif not os.path.exists(dest):
                bad.append((no, target, "no such file"))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append((no, target, f"no heading with anchor #{anchor}"))
    return bad


def self_test():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "docs"))
        with open(os.path.join(d, "docs", "a.md"), "w") as f:
            f.write("# A\n\n## Two words: `x`\n\n[ok](b.md#b-title) [ok2](#two-words-x) "
                    "[gone](c.md) [anchor](b.md#nope) [out](../../etc/passwd) "
                    "`[code](ignored.md)`\n```\n[fenced](ignored.md)\n```\n")
        with open(os.path.join(d, "docs", "b.md"), "w") as f:
            f.write("# B title\n")
        got = broken_links(os.path.join(d, "docs", "a.md"), d)
        assert [t for _, t, _ in got] == ["c.md", "b.md#nope", "../../etc/passwd"], got


TEST_REF = re.compile(r"([\w./-]+\.(?:py|c|mjs))::(\w+)")


def defines(text, func):
    """True if a test source defines `func` (a Python def, a C function, a JS function)."""
    return re.search(rf"^\s*(?:async\s+)?def {func}\(|^(?:static\s+)?[\w \t*]+\b{func}\(|"
                     rf"\bfunction {func}\(", text, re.M) is not None


def broken_test_refs(path, files):
    """[(line number, reference, reason)] for every `file::function` in a page (the BAD_INPUT table,
    "proven by ..." in the docs) whose file is not tracked or does not define the function.
    `files`: the tracked files' paths."""
    bad, sources = [], {}
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines, 1):
        for m in TEST_REF.finditer(line):
            name, func = m.group(1), m.group(2)
            cands = [f for f in files if f == name or f.endswith("/" + name)]
            if not cands:
                bad.append((no, m.group(0), "no such file"))
                continue
            for c in cands:
                if c not in sources:
                    with open(c, encoding="utf-8", errors="replace") as f:
                        sources[c] = f.read()
            if not any(defines(sources[c], func) for c in cands):
                bad.append((no, m.group(0), f"{name} does not define {func}"))
    return bad


def self_test_refs():
    with tempfile.TemporaryDirectory() as d:
        for name, text in (("t_a.py", "def real_one(gw):\n    pass\n"),
                           ("t_b.c", "static void test_real(void **state)\n{\n}\n")):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        page = os.path.join(d, "p.md")
        with open(page, "w") as f:
            f.write("`t_a.py::real_one`, `t_b.c::test_real`; `t_a.py::gone`, `t_c.py::x`, "
                    "`t_b.c::test_re`\n")
        got = broken_test_refs(page, [os.path.join(d, "t_a.py"), os.path.join(d, "t_b.c")])
        assert [r for _, r, _ in got] == ["t_a.py::gone", "t_c.py::x", "t_b.c::test_re"], got


def doc_files(root):
    files = [os.path.join(root, "README.md"), os.path.join(root, "SECURITY.md")]
    for dirpath, _, names in os.walk(os.path.join(root, "docs")):
        files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".md")]
    return [f for f in files if os.path.exists(f)]


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True,
                             check=True, timeout=30).stdout
        return [os.path.join(root, p) for p in out.decode().split("\0") if p]
    except (OSError, subprocess.SubprocessError):
        skip = {".git", "node_modules"}
        found = []
        for dirpath, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x not in skip and not x.startswith("build")]
            found += [os.path.join(dirpath, n) for n in names]
        return found


def main():
    self_test()
    self_test_refs()
    root = SOURCE_DIR
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        n = sum(1 for _ in f)
    assert n <= MAX_README_LINES, f"README.md has {n} lines, more than {MAX_README_LINES}"

    problems = []
    pages = doc_files(root)
    assert len(pages) >= 10, pages
    for page in pages:
        for no, target, why in broken_links(page, root):
            problems.append(f"{os.path.relpath(page, root)}:{no}: link '{target}': {why}")

    # the user's manual speaks to users: no tracker numbers or design-document references
    jargon = re.compile(r"\bissue \d+|\bdecision D?\d+|\bDESIGN\b|\bD\d+\b|\bP\d+\b")
    for page in pages:
        with open(page, encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                m = jargon.search(line)
                if m:
                    problems.append(f"{os.path.relpath(page, root)}:{no}: internal jargon "
                                    f"'{m.group(0)}'")

    # "proven by `file::function`": the test named exists (BAD_INPUT.md, SECURITY.md, docs/)
    tracked = tracked_files(root)
    refs = 0
    for page in pages + [os.path.join(root, "tests", "BAD_INPUT.md")]:
        with open(page, encoding="utf-8") as f:
            refs += len(TEST_REF.findall(f.read()))
        for no, ref, why in broken_test_refs(page, tracked):
            problems.append(f"{os.path.relpath(page, root)}:{no}: test reference '{ref}': {why}")
    assert refs >= 100, refs  # the checker finds the references it is meant to check

    outside = re.compile(rb"\.\./" + b"shared|" + b"shared" + rb"/specs")
    for path in tracked_files(root):
        if path.endswith("test_docs.py") or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        for no, line in enumerate(data.split(b"\n"), 1):
            if outside.search(line):
                problems.append(f"{os.path.relpath(path, root)}:{no}: refers to the design folder "
                                f"outside the repository")
    assert not problems, "\n".join(problems)
    print(f"docs: README {n} lines; {len(pages)} pages, every relative link resolves; "
          f"{refs} test references name tests that exist")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
