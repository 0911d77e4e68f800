#!/usr/bin/env python3
"""One integration-test helper module (ctest static/test_helpers): tests/integration/xgtest.py
owns the polling wait (wait_until) and the admin-API look-ups (Gateway.adapter, adapters,
counters, entities, wait_counter). No other file in tests/integration/ defines a module-level
function or name under those names or the old copies' names (wait_for, wait, ents), and none
re-sends a sample until it is seen (a `retries=` argument): wait on a condition, send once.
Usage: check_test_helpers.py SOURCE_DIR. Prints each violation with file and line; exits 1 if
there is any, 2 if the folder has no tests."""
import ast
import glob
import os
import sys

NAMES = {"wait_for", "wait", "wait_until", "wait_counter", "entities", "ents", "adapter",
         "adapters", "counters"}


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = sorted(glob.glob(os.path.join(root, "tests", "integration", "*.py")))
    files = [f for f in files if os.path.basename(f) != "xgtest.py"]
    if not files:
        print("check_test_helpers: no tests/integration/*.py (wrong directory?)", file=sys.stderr)
        return 2
    bad = []
    for f in files:
        rel = os.path.relpath(f, root)
        tree = ast.parse(open(f, encoding="utf-8").read(), f)
        for node in tree.body:
            names = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            for n in names:
                if n in NAMES:
                    bad.append(f"{rel}:{node.lineno}: defines '{n}': use xgtest's wait_until or "
                               f"Gateway.adapter/adapters/counters/entities/wait_counter")
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                for k in node.keywords:
                    if k.arg == "retries":
                        bad.append(f"{rel}:{node.lineno}: 'retries=': a sample re-sent until it is "
                                   "seen; wait on a condition and send once")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for a in node.args.args + node.args.kwonlyargs:
                    if a.arg == "retries":
                        bad.append(f"{rel}:{node.lineno}: '{node.name}' takes 'retries': a sample "
                                   "re-sent until it is seen; wait on a condition and send once")
    for b in bad:
        print("check_test_helpers: " + b, file=sys.stderr)
    if not bad:
        print(f"check_test_helpers: ok ({len(files)} files use xgtest's helpers)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
