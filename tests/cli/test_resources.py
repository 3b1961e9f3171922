"""Resource bounds of the CLI: memory does not grow with the size, and no
temporary files are made.  See docs/reliability.md.

TODO(verify): the same bounds for `testdata verify` reading 10G from a pipe,
once the verify command lands (branch cli).
"""
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

MIB = 1 << 20
RSS_LIMIT = 32 * MIB
# Long enough to reach the steady state; a slow (e.g. sanitizer) build is
# stopped after this many seconds and judged on what it used until then.
TIME_CAP = float(os.environ.get("TD_RESOURCE_SECONDS", "10"))
GEN_10G = ["gen", "random", "10G", "--algorithm", "fast"]


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _fd_targets(pid):
    out = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                out.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                pass
    except OSError:
        pass
    return out


@pytest.mark.skipif(not os.path.exists("/usr/bin/time"), reason="needs GNU time")
def test_gen_10g_peak_rss_under_32_mib(cli, tmp_path):
    """`gen random 10G` streams: its peak RSS stays far below the size."""
    report = tmp_path / "time.txt"
    p = subprocess.Popen(["/usr/bin/time", "-v", "-o", str(report), cli, *GEN_10G],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + TIME_CAP
    fds = set()
    stopped = False
    while p.poll() is None:
        for child in _children(p.pid):
            fds |= _fd_targets(child)
        if time.monotonic() > deadline:
            for child in _children(p.pid):
                os.kill(child, signal.SIGTERM)
            stopped = True
            break
        time.sleep(0.05)
    _, err = p.communicate(timeout=60)
    text = report.read_text()
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    assert m, text
    rss = int(m.group(1)) * 1024
    assert rss < RSS_LIMIT, f"peak RSS {rss / MIB:.1f} MiB"
    if not stopped:
        assert p.returncode == 0, err
        assert "Exit status: 0" in text, text
    # Only the standard streams, /dev/null and the like: no files of its own.
    # (GNU time's -o file is inherited: it is time's, not ours.)
    own = {t for t in fds
           if t.startswith("/") and not t.startswith("/dev/") and t != str(report)}
    assert not own, f"files held open: {own}"


@pytest.mark.skipif(not shutil.which("strace"), reason="needs strace")
def test_gen_makes_no_temporary_files(cli, tmp_path):
    """No file is created (O_CREAT, O_TMPFILE, memfd) while generating."""
    log = tmp_path / "strace.txt"
    r = subprocess.run(["strace", "-f", "-qq", "-o", str(log), "-e",
                        "trace=open,openat,openat2,creat,memfd_create,mkdir,mkdirat,"
                        "rename,renameat,renameat2,link,linkat,symlink,symlinkat",
                        cli, "gen", "random", "64M", "--algorithm", "fast", "--threads", "2"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120,
                       # LeakSanitizer cannot run under ptrace.
                       env={**os.environ, "ASAN_OPTIONS": "detect_leaks=0"})
    if r.returncode != 0 and b"ptrace" in r.stderr:
        pytest.skip("ptrace not permitted here")
    assert r.returncode == 0, r.stderr
    calls = log.read_text().splitlines()
    assert calls, "strace recorded nothing"
    bad = [c for c in calls
           if re.search(r"O_CREAT|O_TMPFILE|memfd_create\(|mkdir|rename|link\(|linkat\(|symlink",
                        c)]
    assert not bad, "\n".join(bad)
