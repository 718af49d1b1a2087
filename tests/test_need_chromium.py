"""A machine without Debian's chromium: `make chromium` (the first step of `make test`, `make browser`
and `make lab`) says so in one line with the command that installs it, instead of a failure deep
inside a browser test. OPTBOOK_CHROMIUM points the check at a missing executable (the message path;
with an override nothing is installed, even as root)."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_chromium(exe: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPTBOOK_CHROMIUM": exe}
    return subprocess.run(["make", "-s", "--no-print-directory", "chromium"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def test_missing_browser_is_one_line_with_the_install_command(tmp_path):
    missing = str(tmp_path / "no-such-chromium")
    run = make_chromium(missing)
    assert run.returncode != 0
    # make's own "make: *** ... Error 1" line (make[1]: under a make that runs the tests) is not ours
    own = [line for line in run.stderr.splitlines() if not re.match(r"make(\[\d+\])?: ", line)]
    assert run.stdout == "" and len(own) == 1, run.stderr
    assert missing in own[0] and "apt-get install -y chromium" in own[0]


def test_present_browser_passes_silently(tmp_path):
    exe = tmp_path / "chromium"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    run = make_chromium(str(exe))
    assert run.returncode == 0 and run.stdout == "" and run.stderr == ""
