"""Runs `ecnlab run FILE --out DIR -q` for test_config_fuzz.py, case after
case, in a process of its own, so that an abort or a hang in one case is
seen as such instead of taking the test run with it.

Reads one JSON request per line on stdin ({"toml": path, "out": dir}) and
answers one JSON line on stdout: the exit status, what the command wrote
to stderr, anything written to file descriptor 2 underneath Python (a Rust
panic message would land there), and the traceback of an exception that
escaped the command, if any.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
import traceback


def main() -> None:
    from ecnlab.cli import main as ecnlab_main

    answers = os.fdopen(os.dup(1), "w", buffering=1)
    # Anything else printed on stdout would corrupt the answers.
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    raw_err = tempfile.TemporaryFile()
    os.dup2(raw_err.fileno(), 2)
    for line in sys.stdin:
        request = json.loads(line)
        shutil.rmtree(request["out"], ignore_errors=True)
        raw_err.seek(0)
        raw_err.truncate()
        stderr = io.StringIO()
        code = None
        escaped = None
        start = time.monotonic()
        try:
            with contextlib.redirect_stderr(stderr):
                code = ecnlab_main(["run", request["toml"], "--out", request["out"], "-q"])
        except BaseException:  # noqa: BLE001 - any escape is what we look for
            escaped = traceback.format_exc()
        raw_err.seek(0)
        answer = {
            "code": code,
            "stderr": stderr.getvalue(),
            "fd2": raw_err.read().decode("utf-8", "replace"),
            "traceback": escaped,
            "seconds": time.monotonic() - start,
        }
        answers.write(json.dumps(answer) + "\n")


if __name__ == "__main__":
    main()
