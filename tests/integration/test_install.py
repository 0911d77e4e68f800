"""Integration: `make install DESTDIR=... PREFIX=/usr` puts the gateway and its man pages where
man finds them (usr/bin/xrgate, usr/share/man/man8/xrgate.8, usr/share/man/man5/xrgate.yaml.5),
the installed binary runs (`--version`), and both pages render without a single warning:
`groff -ww -z -man` prints nothing, and `man --warnings -l` prints nothing on stderr and the
page's NAME line on stdout. The man page of the CLI names every long option main.c accepts, and
the configuration page every key of the gateway section. Uses the test's build directory
(BUILD=...), which is already built: make only checks it."""
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
            assert f'"{v.stdout.strip()}"' in th, (name, th, v.stdout)
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
    for key in ("admin.listen", "admin.token_file", "admin.max_connections",
                "admin.request_timeout_ms", "admin.tls", "predict.max_horizon_ms",
                "predict.velocity_window_ms", "entity.stale_ms", "entity.expire_ms",
                "entity.max_entities", "log_level", "strict"):
        assert key in text["xrgate.yaml.5"], f"xrgate.yaml(5) omits {key}"
    print("make install: bin/xrgate, man8/xrgate.8 and man5/xrgate.yaml.5 installed; both pages "
          "render without warnings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
