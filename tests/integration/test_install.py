"""Integration: `make install DESTDIR=... PREFIX=/usr` puts the gateway and its man pages where
man finds them (usr/bin/xrgate, usr/share/man/man8/xrgate.8, usr/share/man/man5/xrgate.yaml.5),
the installed binary runs (`--version`), and both pages render without a single warning:
`groff -ww -z -man` prints nothing, and `man --warnings -l` prints nothing on stderr and the
page's NAME line on stdout. The man page of the CLI names every long option main.c accepts and
every adapter type; the configuration page every key of the gateway section, every adapter type
(with its own entry) and frame preset the binary knows, and every key of the adapter pages.
Uses the test's build directory (BUILD=...), which is already built: make only checks it."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from xgtest import BIN, SOURCE_DIR, skip


def main():
    build = os.environ.get("XG_BUILD_DIR") or os.path.dirname(os.path.abspath(BIN))
    for tool in ("make", "groff", "man"):
        if not shutil.which(tool):
            skip(f"{tool} is not installed (docker/install-deps.sh installs it)")
    with tempfile.TemporaryDirectory(prefix="xrgate-install-") as dest:
        r = subprocess.run(["make", "--no-print-directory", "-C", SOURCE_DIR, "install",
                            f"BUILD={build}", f"DESTDIR={dest}", "PREFIX=/usr", "JOBS=1"],
                           capture_output=True, text=True, timeout=240)
        assert r.returncode == 0, r.stdout + r.stderr
        binary = os.path.join(dest, "usr", "bin", "xrgate")
        pages = {"xrgate.8": os.path.join(dest, "usr", "share", "man", "man8", "xrgate.8"),
                 "xrgate.yaml.5": os.path.join(dest, "usr", "share", "man", "man5",
                                               "xrgate.yaml.5")}
        for path in [binary] + list(pages.values()):
            assert os.path.isfile(path), f"make install did not install {path}:\n{r.stdout}"
        v = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
        assert v.returncode == 0 and v.stdout.startswith("xrgate "), v
        for name, path in pages.items():  # the pages' footer names the installed version
            with open(path) as f:
                th = next(l for l in f if l.startswith(".TH "))
            assert f'"{v.stdout.splitlines()[0]}"' in th, (name, th, v.stdout)
        names = {"xrgate.8": "xrgate - multi-protocol translation gateway for live pose data",
                 "xrgate.yaml.5": "xrgate.yaml - configuration file of the xrgate pose-data "
                                  "gateway"}
        env = dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="", LC_ALL="C.UTF-8",
                   MANPAGER="cat", PAGER="cat")
        text = {}
        for name, path in pages.items():
            g = subprocess.run(["groff", "-ww", "-z", "-man", path], capture_output=True,
                               text=True, timeout=30)
            assert g.returncode == 0 and g.stderr == "" and g.stdout == "", (name, g.stderr)
            m = subprocess.run(["man", "--warnings", "-l", path], capture_output=True, text=True,
                               timeout=30, env=env)
            assert m.returncode == 0 and m.stderr == "", (name, m.stderr)
            plain = re.sub(r".\x08", "", m.stdout)
            assert names[name] in plain, (name, plain[:400])
            text[name] = plain
    with open(os.path.join(SOURCE_DIR, "gateway", "main.c")) as f:
        longopts = re.findall(r'\{"([a-z-]+)", (?:no|required|optional)_argument', f.read())
    for opt in longopts:
        assert f"--{opt}" in text["xrgate.8"], f"xrgate(8) omits --{opt}"
    for key in ("id", "resolv_conf", "admin.listen", "admin.token_file", "admin.max_connections",
                "admin.request_timeout_ms", "admin.tls", "predict.max_horizon_ms",
                "predict.velocity_window_ms", "predict.motion_memory_ms", "entity.stale_ms", "entity.expire_ms",
                "entity.max_entities", "log_level", "strict"):
        assert key in text["xrgate.yaml.5"], f"xrgate.yaml(5) omits {key}"
    check_adapters(text)
    print("make install: bin/xrgate, man8/xrgate.8 and man5/xrgate.yaml.5 installed; both pages "
          "render without warnings")
    return 0


def known(config):
    """The names the gateway lists as known when `xrgate --check` refuses one."""
    r = subprocess.run([BIN, "--check", "--config", "/dev/stdin"], input=config,
                       capture_output=True, text=True, timeout=30)
    m = re.search(r"\(known: ([^)]*)\)", r.stderr)
    assert r.returncode == 1 and m, r.stderr
    return m.group(1).split(", ")


def man_entries(path):
    """xrgate.yaml(5)'s source as {section: {entry tag: text}}: `.SH` sections, `.TP` entries
    tagged by their first word, with troff's escapes and font requests taken out."""
    sections, sec, tag = {}, None, None
    with open(path) as f:
        lines = f.read().replace("\\-", "-").splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".SH "):
            sec, tag = line[4:].strip('"'), None
            sections[sec] = {}
        elif line == ".TP" and sec and i + 1 < len(lines):
            tag = lines[i + 1].split()[1] if len(lines[i + 1].split()) > 1 else None
            sections[sec][tag] = ""
        elif tag:
            sections[sec][tag] += re.sub(r'^\.[A-Z]+ ?|"', " ", line) + "\n"
    return sections


def check_adapters(text):
    """Every adapter type and frame preset the binary knows has its place in the pages: each type
    in xrgate.yaml(5)'s `type` key and its own entry under ADAPTER TYPES, and named in xrgate(8);
    each preset in the `frame` key; every key of the adapter pages' key tables
    (docs/adapters/*.md, "| key | default | meaning |") somewhere in xrgate.yaml(5)."""
    types = known("adapters:\n  - {name: x, type: zz-none}\n")
    presets = known("adapters:\n  - {name: x, type: synth, frame: zz-none}\n")
    assert "vrpn-server" in types and "yup-rh" in presets, (types, presets)
    man = man_entries(os.path.join(SOURCE_DIR, "docs", "man", "xrgate.yaml.5"))
    common, entries = man["KEYS OF EVERY ADAPTER"], man["ADAPTER TYPES"]
    word = r"(?<![\w-]){}(?![\w-])"
    for t in types:
        assert re.search(word.format(re.escape(t)), common["type"]), \
            f"xrgate.yaml(5): type omits {t}"
        assert t in entries, f"xrgate.yaml(5): no entry for the {t} adapter under ADAPTER TYPES"
        assert re.search(word.format(re.escape(t)), text["xrgate.8"]), \
            f"xrgate(8) does not name the {t} adapter"
    for p in presets:
        assert re.search(word.format(re.escape(p)), common["frame"]), \
            f"xrgate.yaml(5): frame omits the preset {p}"
    page = text["xrgate.yaml.5"]
    pages = os.path.join(SOURCE_DIR, "docs", "adapters")
    for md in sorted(os.listdir(pages)):
        with open(os.path.join(pages, md)) as f:
            keys, in_table = [], False
            for line in f:
                if line.startswith("| key | default | meaning |"):
                    in_table = True
                elif in_table and not line.startswith("|"):
                    in_table = False
                elif in_table:
                    keys += re.findall(r"`([a-z_]+)`", line.split("|")[1])
        for k in keys:
            assert re.search(rf"\b{k}\b", page), f"xrgate.yaml(5) omits {k} (docs/adapters/{md})"
    print(f"man pages: {len(types)} adapter types, {len(presets)} frame presets, the adapter "
          "pages' keys")


if __name__ == "__main__":
    sys.exit(main())
