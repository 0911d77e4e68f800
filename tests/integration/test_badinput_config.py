"""Bad input, configuration: each file in tests/integration/configs/bad/adapters/ is rejected by
`xrgate --check` (exit 1, nothing started, no "configuration OK") with the file:line:column message
of its `# expect:` line. These are the adapter-specific cases of tests/BAD_INPUT.md; they live in
a sub-folder so that test_check.py (which reads configs/bad/*.yaml) keeps passing in partial
builds: here, a file whose adapter type is not in this build is skipped and reported (exit 77
only if none could run). Also checked: a config that is not valid UTF-8, one whose YAML nests
deeper than 64 levels and one with a 70000-byte value are rejected without a crash, with their
exact file:line:column error."""
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import faultlib as F  # noqa: E402
from xgtest import BIN  # noqa: E402


def check(path):
    with open(path) as f:
        text = f.read()
    expect = [l.split("# expect:", 1)[1].strip() for l in text.splitlines()
              if l.startswith("# expect:")]
    assert expect, f"{path}: no '# expect:' line"
    r = subprocess.run([BIN, "--check", "--config", path], capture_output=True, text=True,
                       timeout=10)
    assert r.returncode == 1, f"{path}: exit {r.returncode}: {r.stdout} {r.stderr}"
    want = expect[0].replace("FILE", path)
    assert want in r.stderr, f"{path}: want {want!r} in {r.stderr!r}"
    assert "configuration OK" not in r.stdout


def check_raw(name, data, pattern):
    with tempfile.NamedTemporaryFile(suffix=".yaml", delete=False) as f:
        f.write(data)
    try:
        r = subprocess.run([BIN, "--check", "--config", f.name], capture_output=True, timeout=10)
        err = r.stderr.decode(errors="replace")
        assert r.returncode == 1 and re.search(pattern, err), (name, r.returncode, err)
        assert f.name in err, (name, err)
        print(f"ok {name}: {err.strip().splitlines()[0][:120]}")
    finally:
        os.unlink(f.name)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    sec = F.Sections()
    files = sorted(glob.glob(os.path.join(here, "configs", "bad", "adapters", "*.yaml")))
    assert len(files) >= 10, files
    for path in files:
        with open(path) as f:
            types = re.findall(r"^\s*type:\s*([a-z-]+)", f.read(), re.M)
        sec.run(os.path.basename(path), types, check, path)
    check_raw("invalid UTF-8", b"gateway:\n  id: \xff\xfe\xfa\n", r"YAML syntax error|UTF-8")
    # issue 22 item 18: 5000 levels overflowed the parser's stack under ASan (fuzz_config)
    check_raw("deep nesting", b"gateway:\n  id: x\nextra: " + b"[" * 5000 + b"]" * 5000 + b"\n",
              r":3:71: list nested deeper than 64 levels$")
    check_raw("deep mappings", b"a: " + b"{a: " * 5000 + b"1" + b"}" * 5000 + b"\n",
              r":1:256: mapping nested deeper than 64 levels$")
    check_raw("huge value", b"gateway:\n  id: " + b"x" * 70000 + b"\n",
              r":2:7: value of 70000 bytes is longer than 65536$")
    check_raw("NUL byte", b"gateway:\n  id: x\x00y\n", r":\d+:\d+: ")
    return sec.finish()


if __name__ == "__main__":
    sys.exit(main())
