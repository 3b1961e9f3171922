"""Resource bounds of the CLI: memory does not grow with the size, and no
temporary files are made, for `gen` writing 10G and for `verify` reading 10G
from a pipe.  See docs/reliability.md.
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
VERIFY_10G = ["verify", "random", "10G", "--algorithm", "fast"]
TRACED = ("trace=open,openat,openat2,creat,memfd_create,mkdir,mkdirat,"
          "rename,renameat,renameat2,link,linkat,symlink,symlinkat")
CREATES = r"O_CREAT|O_TMPFILE|memfd_create\(|mkdir|rename|link\(|linkat\(|symlink"


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
    seen = {}  # fd target -> samples that saw it
    stopped = False
    while p.poll() is None:
        for child in _children(p.pid):
            for t in _fd_targets(child):
                seen[t] = seen.get(t, 0) + 1
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
    # (GNU time's -o file is inherited: it is time's, not ours.)  A file seen
    # in one sample only is the dynamic loader's, open for the instant it maps
    # a library at start-up; a file the run holds is seen in every sample.
    own = {t for t, n in seen.items()
           if n >= 2 and t.startswith("/") and not t.startswith("/dev/") and t != str(report)}
    assert not own, f"files held open: {own}"


@pytest.mark.skipif(not shutil.which("strace"), reason="needs strace")
def test_gen_makes_no_temporary_files(cli, tmp_path):
    """No file is created (O_CREAT, O_TMPFILE, memfd) while generating."""
    log = tmp_path / "strace.txt"
    r = subprocess.run(["strace", "-f", "-qq", "-o", str(log), "-e", TRACED, cli,
                        "gen", "random", "64M", "--algorithm", "fast", "--threads", "2"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120,
                       # LeakSanitizer cannot run under ptrace.
                       env={**os.environ, "ASAN_OPTIONS": "detect_leaks=0"})
    if r.returncode != 0 and b"ptrace" in r.stderr:
        pytest.skip("ptrace not permitted here")
    assert r.returncode == 0, r.stderr
    calls = log.read_text().splitlines()
    assert calls, "strace recorded nothing"
    bad = [c for c in calls if re.search(CREATES, c)]
    assert not bad, "\n".join(bad)


def _peak_rss(report):
    text = report.read_text()
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    assert m, text
    return int(m.group(1)) * 1024, text


@pytest.mark.skipif(not os.path.exists("/usr/bin/time"), reason="needs GNU time")
def test_gen_verify_10g_pipe_peak_rss_under_32_mib(cli, tmp_path):
    """`gen random 10G | verify random 10G` (fast algorithm): the peak RSS of
    each stays far below the size, and verify opens no file of its own."""
    grep, vrep = tmp_path / "gen.time", tmp_path / "verify.time"
    # Under AddressSanitizer, freed memory waits in a 256 MiB quarantine (and
    # verify frees a 1 MiB scratch buffer per chunk): measure without it.
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0:quarantine_size_mb=0"}
    g = subprocess.Popen(["/usr/bin/time", "-v", "-o", str(grep), cli, *GEN_10G],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    v = subprocess.Popen(["/usr/bin/time", "-v", "-o", str(vrep), cli, *VERIFY_10G],
                         stdin=g.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env)
    g.stdout.close()  # verify holds the only read end: gen sees EPIPE if it quits
    deadline = time.monotonic() + TIME_CAP
    fds, samples = set(), 0
    stopped = False
    while v.poll() is None:
        for child in _children(v.pid):
            fds |= _fd_targets(child)
            samples += 1
        if time.monotonic() > deadline:
            # Stop the writer: verify then reports a short input and exits.
            for child in _children(g.pid) + _children(v.pid):
                try:
                    os.kill(child, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            stopped = True
            break
        time.sleep(0.05)
    _, verr = v.communicate(timeout=60)
    _, gerr = g.communicate(timeout=60)
    gen_rss, gtext = _peak_rss(grep)
    ver_rss, vtext = _peak_rss(vrep)
    print(f"peak RSS: gen {gen_rss / MIB:.1f} MiB, verify {ver_rss / MIB:.1f} MiB"
          f"{' (stopped at the time cap)' if stopped else ''}")
    assert gen_rss < RSS_LIMIT, f"gen peak RSS {gen_rss / MIB:.1f} MiB"
    assert ver_rss < RSS_LIMIT, f"verify peak RSS {ver_rss / MIB:.1f} MiB"
    if not stopped:
        assert v.returncode == 0 and "Exit status: 0" in vtext, verr
        assert g.returncode == 0 and "Exit status: 0" in gtext, gerr
    assert samples > 0, "verify's descriptors were never sampled"
    # What the loader and libraries open as the program starts (/sys/devices/
    # system/node, locale files) is not verify's own data.
    system = ("/dev/", "/sys/", "/proc/", "/usr/", "/etc/", "/lib")
    own = {t for t in fds
           if t.startswith("/") and not t.startswith(system) and t != str(vrep)}
    assert not own, f"files held open by verify: {own}"


@pytest.mark.skipif(not shutil.which("strace"), reason="needs strace")
@pytest.mark.parametrize("source", ["pipe", "file"])
def test_verify_makes_no_temporary_files(cli, tmp_path, source):
    """verify creates no file (O_CREAT, O_TMPFILE, memfd...), from a pipe or
    reading a file (which it opens read-only)."""
    log = tmp_path / "strace.txt"
    data = tmp_path / "data.bin"
    args = ["verify", "random", "64M", "--algorithm", "fast", "--threads", "2"]
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0"}  # LSan cannot run under ptrace
    if source == "file":
        assert subprocess.run([cli, "gen", "random", "64M", "--algorithm", "fast", "-o",
                               str(data)]).returncode == 0
        cmd = ["strace", "-f", "-qq", "-o", str(log), "-e", TRACED, cli, *args, str(data)]
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
                           env=env)
    else:
        g = subprocess.Popen([cli, "gen", "random", "64M", "--algorithm", "fast"],
                             stdout=subprocess.PIPE)
        r = subprocess.run(["strace", "-f", "-qq", "-o", str(log), "-e", TRACED, cli, *args],
                           stdin=g.stdout, capture_output=True, timeout=120, env=env)
        g.stdout.close()
        g.wait(timeout=60)
    if r.returncode != 0 and b"ptrace" in r.stderr:
        pytest.skip("ptrace not permitted here")
    assert r.returncode == 0, r.stderr
    calls = log.read_text().splitlines()
    assert calls, "strace recorded nothing"
    bad = [c for c in calls if re.search(CREATES, c)]
    assert not bad, "\n".join(bad)
    if source == "file":
        opened = [c for c in calls if str(data) in c]
        assert opened and all("O_RDONLY" in c for c in opened), opened
