"""harness.py - what the Python drivers of bench/replica-query and
bench/tenants share around their main: the test helpers' directory on the
import path (tests/ember_test.py: Server, the profile encoder), and a run
that stops every server started and keeps the servers' log.

    from harness import run
    run(main, TMP, os.path.join(OUT, "log"))
"""
import os
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests"))
from ember_test import stop_servers  # noqa: E402


def run(main, tmp, log_dir, log="server.log"):
    """main(); then, whatever it did, stop every ember_test.Server still
    running, copy tmp/log (the servers' stderr) into log_dir, remove tmp."""
    try:
        main()
    finally:
        stop_servers()
        if os.path.exists(os.path.join(tmp, log)):
            os.makedirs(log_dir, exist_ok=True)
            shutil.copy(os.path.join(tmp, log), os.path.join(log_dir, log))
        shutil.rmtree(tmp, ignore_errors=True)
