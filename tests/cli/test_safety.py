"""Data safety of the command line (docs/reliability.md, "Never lose a user's
data"): gen -o never replaces what is not a regular file, follows symlinks,
replaces a file only once the new one is complete, leaves nothing behind on
failure or signal; closed standard descriptors; bounded --files; messages
that say what really happened.  Run as root in CI: device nodes, FIFOs,
small tmpfs mounts and hard links are all exercised."""
import json
import os
import pathlib
import resource
import signal
import stat
import subprocess
import tempfile
import time

import pytest


def gen(cli, *args, **kw):
    return subprocess.run([cli, "gen", *map(str, args)], capture_output=True, **kw)


def verifies(cli, path, kind, size, *args):
    return subprocess.run([cli, "verify", kind, str(size), *map(str, args), str(path)],
                          capture_output=True).returncode == 0


@pytest.fixture
def tmpfs():
    """A 1 MiB tmpfs (unmounted afterwards), or skip."""
    d = tempfile.mkdtemp()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", d],
                      capture_output=True).returncode != 0:
        os.rmdir(d)
        pytest.skip("cannot mount a tmpfs here")
    yield pathlib.Path(d)
    subprocess.run(["umount", d])
    os.rmdir(d)


# --- what is not a regular file is written into, never replaced ------------------

def test_dev_full_is_not_replaced(cli, tmp_path):
    full = tmp_path / "full"  # a copy of the device: a regression harms only the copy
    try:
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except PermissionError:
        pytest.skip("mknod needs root")
    r = gen(cli, "zero", 10, "-o", full)
    assert r.returncode == 1 and b"No space left on device" in r.stderr
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_device_node_copy_is_not_replaced(cli, tmp_path):
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs root")
    r = gen(cli, "random", "3M", "-o", node)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.lstat(node).st_mode)
    assert os.listdir(tmp_path) == ["null"]


def test_fifo_is_written_into(cli, tmp_path):
    fifo, out = tmp_path / "fifo", tmp_path / "out"
    os.mkfifo(fifo)
    with open(out, "wb") as o:
        reader = subprocess.Popen(["cat", str(fifo)], stdout=o)
        r = gen(cli, "random", "3M", "--seed", 4, "-o", fifo)
        reader.wait(timeout=20)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert verifies(cli, out, "random", "3M", "--seed", 4)


def test_dev_stdout_is_stdout(cli):
    p = subprocess.run([cli, "gen", "random", "1M", "--seed", "2", "-o", "/dev/stdout"],
                       capture_output=True)
    assert p.returncode == 0, p.stderr
    want = subprocess.run([cli, "gen", "random", "1M", "--seed", "2"], capture_output=True).stdout
    assert p.stdout == want
    assert os.path.islink("/dev/stdout")


def test_dev_stdout_appended_to_keeps_the_file(cli, tmp_path):
    """-o /dev/stdout with stdout appending to a file (>>) or shared with
    other writers: the data goes where stdout is, as with the shell's own
    "> /dev/stdout".  The file used to be reopened and truncated: the log
    lost its lines, the header was overwritten."""
    log = tmp_path / "log"
    log.write_bytes(b"earlier lines\n")
    with open(log, "ab") as out:
        r = subprocess.run([cli, "gen", "zero", "10", "-o", "/dev/stdout"], stdout=out,
                           stderr=subprocess.PIPE)
    assert r.returncode == 0, r.stderr
    assert log.read_bytes() == b"earlier lines\n" + bytes(10)
    r = subprocess.run(["sh", "-c", f"{{ echo head; '{cli}' gen zero 4 -o /dev/stdout; echo tail; }}"
                        f" > '{log}'"], stderr=subprocess.PIPE)
    assert r.returncode == 0, r.stderr
    assert log.read_bytes() == b"head\n" + bytes(4) + b"tail\n"
    # stdout closed (read-only /dev/null in its place): an error, as without -o
    r = subprocess.run([cli, "gen", "zero", "10", "-o", "/dev/stdout"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, close_fds=True,
                       preexec_fn=lambda: os.close(1))
    assert r.returncode == 1 and b"Bad file descriptor" in r.stderr, r.stderr
    # /dev/stdin open for reading: never written into
    with open(log, "rb") as inp:
        r = subprocess.run([cli, "gen", "zero", "10", "-o", "/dev/stdin"], stdin=inp,
                           capture_output=True)
    assert r.returncode == 1 and b"Bad file descriptor" in r.stderr, r.stderr
    assert log.read_bytes() == b"head\n" + bytes(4) + b"tail\n"


def test_immutable_file_is_not_replaced_and_says_why(cli, tmp_path):
    """The data is complete but the rename fails (chattr +i): the old file
    stays and the message says so; it used to call it a write error."""
    f = tmp_path / "f"
    f.write_bytes(b"precious")
    if subprocess.run(["chattr", "+i", str(f)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not possible here")
    try:
        r = gen(cli, "zero", 10, "-o", f)
    finally:
        subprocess.run(["chattr", "-i", str(f)])
    assert r.returncode == 1
    assert r.stderr == b"testdata: wrote 10 bytes but cannot put '" + bytes(f) + \
        b"' in place: Operation not permitted\n"
    assert f.read_bytes() == b"precious" and os.listdir(tmp_path) == ["f"]


@pytest.mark.parametrize("args", [
    ["gen", "zero", "1", "-o", ""], ["gen", "zero", "1", "--output="], ["model", "export", "-o", ""],
    ["model", "build", "CORPUS", "-o", ""], ["profile", "CORPUS", "-o", ""],
    ["profile", "--dump", "html", "-o", ""], ["tree", "like", ".", "-o", ""]])
def test_empty_output_name_is_a_usage_error(cli, tmp_path, args):
    """-o "" (an unset variable): exit 2 naming the option, before any work;
    it was exit 1 "cannot write '': invalid argument", after profile and
    model build had read and measured the whole input."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(subprocess.run([cli, "gen", "text", "20K"], capture_output=True).stdout)
    args = [str(corpus) if a == "CORPUS" else a for a in args]
    r = subprocess.run([cli, *args], capture_output=True, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(b"testdata: option '-") and b"name, not an empty string" in r.stderr
    assert b"sample:" not in r.stderr  # nothing measured first
    assert os.listdir(tmp_path) == ["corpus.txt"]


def test_dash_is_stdout(cli, tmp_path):
    p = subprocess.run([cli, "gen", "zero", "10", "-o", "-"], capture_output=True, cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == bytes(10)
    assert os.listdir(tmp_path) == []


def test_symlink_to_proc_fd_survives_sigint(cli, tmp_path):
    """A symlink to /proc/self/fd/1 (like /dev/stdout) with stdout a regular
    file, then SIGINT: the link used to be unlinked as "the incomplete
    output"."""
    link, sink = tmp_path / "out", tmp_path / "sink"
    os.symlink("/proc/self/fd/1", link)
    with open(sink, "wb") as s:
        p = subprocess.Popen([cli, "gen", "random", "inf", "--algorithm", "fast", "-o", link],
                             stdout=s, stderr=subprocess.PIPE)
        end = time.time() + 20
        while time.time() < end and sink.stat().st_size < (4 << 20):
            time.sleep(0.01)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=20)
    assert p.returncode == 130
    assert os.path.islink(link) and os.readlink(link) == "/proc/self/fd/1"
    assert sink.exists()


# --- symlinks and hard links ----------------------------------------------------------

def test_symlink_is_followed(cli, tmp_path):
    target, link = tmp_path / "target", tmp_path / "link"
    target.write_bytes(b"old")
    os.symlink("target", link)
    assert gen(cli, "random", "1M", "--seed", 3, "-o", link).returncode == 0
    assert os.path.islink(link)
    assert verifies(cli, target, "random", "1M", "--seed", 3)
    assert sorted(os.listdir(tmp_path)) == ["link", "target"]


def test_failure_through_symlink_keeps_link_and_target(cli, tmp_path):
    target, link = tmp_path / "target", tmp_path / "link"
    target.write_bytes(b"precious")
    os.symlink("target", link)
    r = gen(cli, "random", "4M", "-o", link, preexec_fn=lambda: resource.setrlimit(
        resource.RLIMIT_FSIZE, (1 << 20, 1 << 20)))
    assert r.returncode == 1 and b"File too large" in r.stderr
    assert b"removed" not in r.stderr
    assert os.path.islink(link) and target.read_bytes() == b"precious"
    assert sorted(os.listdir(tmp_path)) == ["link", "target"]


def test_others_file_in_a_sticky_directory_is_not_replaced(cli, tmp_path):
    """As fs.protected_regular: root's gen -o and tree gen do not replace
    another user's file planted in a sticky world-writable directory."""
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    planted = sticky / "f0.bin"  # the first file of a default tree
    planted.write_bytes(b"planted")
    try:
        os.chown(planted, 65534, 65534)
    except PermissionError:
        pytest.skip("needs root")
    r = gen(cli, "zero", "1K", "-o", planted)
    assert r.returncode == 1 and b"Permission denied" in r.stderr, r.stderr
    assert planted.read_bytes() == b"planted"
    r = subprocess.run([cli, "tree", "gen", sticky, "--files", "3", "-q"], capture_output=True)
    assert r.returncode == 1 and b"Permission denied" in r.stderr, r.stderr
    assert planted.read_bytes() == b"planted"
    sticky.chmod(0o777)  # not sticky: replaced, and still the user's
    assert gen(cli, "zero", "1K", "-o", planted).returncode == 0
    assert planted.stat().st_size == 1024 and planted.stat().st_uid == 65534


def test_hard_link_keeps_the_old_data(cli, tmp_path):
    f, other = tmp_path / "f", tmp_path / "other"
    f.write_bytes(b"precious")
    os.link(f, other)
    r = gen(cli, "random", "4M", "-o", f, preexec_fn=lambda: resource.setrlimit(
        resource.RLIMIT_FSIZE, (1 << 20, 1 << 20)))
    assert r.returncode == 1
    assert f.read_bytes() == b"precious" and other.read_bytes() == b"precious"
    assert gen(cli, "random", "1M", "-o", f).returncode == 0
    assert verifies(cli, f, "random", "1M") and other.read_bytes() == b"precious"


# --- an output that names an input -----------------------------------------------------

def test_output_naming_an_input_is_refused(cli, tmp_path):
    """`model build C -o C` and `profile S -o S` would put a model or a
    profile in place of the user's corpus or sample: refused (exit 2) before
    anything is read, whatever name reaches the file."""
    c = tmp_path / "c.txt"
    c.write_bytes(gen(cli, "text", "40K", "--seed", 3, check=True).stdout)
    keep = c.read_bytes()
    os.link(c, tmp_path / "hard.txt")
    os.symlink(c, tmp_path / "sym.txt")
    other = tmp_path / "other.txt"
    other.write_bytes(keep)

    def run(*args, **kw):
        return subprocess.run([cli, *map(str, args)], capture_output=True, **kw)

    for out in (c, tmp_path / "hard.txt", tmp_path / "sym.txt", tmp_path / "." / "c.txt"):
        r = run("model", "build", other, c, "-o", out)
        assert r.returncode == 2 and b"is a corpus file: the model would replace it" in r.stderr, r
        r = run("profile", c, "-o", out, "--no-fingerprint")
        assert r.returncode == 2 and b"is a sample file: the profile would replace it" in r.stderr, r
    with open(c, "rb") as f:  # stdin is the file
        assert run("model", "build", "-", "-o", c, stdin=f).returncode == 2
    with open(c, "rb") as f:
        assert run("profile", "-", "-o", c, stdin=f).returncode == 2
    assert c.read_bytes() == keep and os.path.islink(tmp_path / "sym.txt")
    # another output is fine
    assert run("model", "build", c, "-o", tmp_path / "m.tdm").returncode == 0
    assert run("profile", c, "-o", tmp_path / "p.json", "--no-fingerprint").returncode == 0
    assert c.read_bytes() == keep
    # nor does generated data replace the model or profile it comes from
    m, p = tmp_path / "m.tdm", tmp_path / "p.json"
    mk, pk = m.read_bytes(), p.read_bytes()
    os.symlink(p, tmp_path / "psym.json")
    for args in (("text", "1M", "--model", m, "-o", m), ("like", "1M", "--profile", p, "-o", p),
                 ("like", "1M", "--profile", tmp_path / "psym.json", "-o", p),
                 ("like", "1M", "--profile", p, "-o", tmp_path / "psym.json")):
        r = run("gen", *args)
        assert r.returncode == 2 and b"the data is generated from: it would be replaced" in r.stderr, r
    assert m.read_bytes() == mk and p.read_bytes() == pk
    assert run("gen", "like", "1M", "--profile", p, "-o", tmp_path / "x.bin").returncode == 0


# --- a failed run leaves the old file --------------------------------------------------

def test_full_disk_keeps_the_old_file(cli, tmpfs):
    f = tmpfs / "precious.txt"
    f.write_bytes(b"precious" * 1000)
    r = gen(cli, "random", "4M", "-o", f)
    assert r.returncode == 1 and b"No space left on device" in r.stderr
    assert b"is unchanged" in r.stderr
    assert f.read_bytes() == b"precious" * 1000
    assert os.listdir(tmpfs) == ["precious.txt"]


def test_memory_limit_never_destroys(cli, tmp_path):
    """`ulimit -v 64000; gen random 64M --threads 8 -o precious.txt` used to
    fail with "out of memory" after truncating the file.  Now threads give
    way (it succeeds), and a failure would leave the file as it was."""
    if b"__asan_init" in pathlib.Path(cli).read_bytes():
        pytest.skip("AddressSanitizer needs more address space")
    f = tmp_path / "precious.txt"
    f.write_bytes(b"precious")
    lim = lambda: resource.setrlimit(resource.RLIMIT_AS, (64000 << 10, 64000 << 10))  # noqa
    r = gen(cli, "random", "64M", "--threads", 8, "-o", f, preexec_fn=lim)
    if r.returncode == 0:
        assert verifies(cli, f, "random", "64M")
    else:
        assert f.read_bytes() == b"precious"
    # threads never make a run fail for want of their buffers: 2 threads
    # work with little more address space than 1 needs.  (The margin is for
    # what glibc and the thread itself take: its stack, malloc's arena.)
    def limit(kib):
        return lambda: resource.setrlimit(resource.RLIMIT_AS, (kib << 10, kib << 10))
    one = next(k for k in range(40000, 200000, 2000)
               if gen(cli, "random", "16M", "--threads", 1, "-o", tmp_path / "a",
                      preexec_fn=limit(k)).returncode == 0)
    r2 = gen(cli, "random", "16M", "--threads", 2, "-o", tmp_path / "b",
             preexec_fn=limit(one + 8000))
    assert r2.returncode == 0, (one, r2.stderr)
    assert verifies(cli, tmp_path / "b", "random", "16M")


def test_concurrent_writers_leave_one_complete_stream(cli, tmp_path):
    f = tmp_path / "f"
    ps = [subprocess.Popen([cli, "gen", "random", "32M", "--seed", str(s), "-o", f],
                           stderr=subprocess.PIPE) for s in (1, 2)]
    assert [p.wait(timeout=60) for p in ps] == [0, 0]
    assert verifies(cli, f, "random", "32M", "--seed", 1) or \
        verifies(cli, f, "random", "32M", "--seed", 2)
    assert os.listdir(tmp_path) == ["f"]


def test_endless_stream_never_replaces_a_file(cli, tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"x")
    r = gen(cli, "zero", "inf", "-o", f)
    assert r.returncode == 2 and b"--keep-partial" in r.stderr
    assert f.read_bytes() == b"x"


# --- the standard descriptors ----------------------------------------------------------

def test_closed_stderr_does_not_become_the_output(cli, tmp_path):
    """`gen text 3G -o x.bin --progress 2>&-`: the output file took fd 2 and
    got the progress lines.  Now fds 0-2 are opened onto /dev/null before
    anything else, so the output lands on a higher descriptor."""
    f = tmp_path / "x.bin"
    p = subprocess.Popen(f"exec '{cli}' gen random 100G --algorithm fast -o '{f}' --progress 2>&-",
                         shell=True)
    try:
        end = time.time() + 20
        fds = {}
        while time.time() < end and not any(
                os.path.realpath(t).startswith(str(tmp_path)) for t in fds.values()):
            time.sleep(0.01)
            fds = {}
            for fd in os.listdir(f"/proc/{p.pid}/fd"):
                try:
                    fds[int(fd)] = os.readlink(f"/proc/{p.pid}/fd/{fd}")
                except OSError:
                    pass
        assert fds.get(2) == "/dev/null", fds
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=20)
    assert not f.exists()
    p = subprocess.run(f"exec '{cli}' gen text 3M -o '{f}' --progress 2>&-", shell=True)
    assert p.returncode == 0
    assert verifies(cli, f, "text", "3M")
    p = subprocess.run(f"exec '{cli}' gen zero 1K -o '{f}' <&- >&-", shell=True)
    assert p.returncode == 0 and f.read_bytes() == bytes(1024)


def test_closed_stdout_is_a_write_error(cli, tmp_path):
    """`gen zero 1M >&-` discarded the data into /dev/null and exited 0; now
    a write to a closed stdout fails (EBADF) as it would for cat."""
    for args in ("gen zero 1M", "gen like 1M --profile html -o -", "model info",
                 "profile --dump html"):
        p = subprocess.run(f"exec '{cli}' {args} >&-", shell=True, stderr=subprocess.PIPE)
        assert p.returncode == 1 and b"Bad file descriptor" in p.stderr, (args, p.stderr)


HELP_OUTPUTS = ["--help", "help", "-h", "--version", "-V", "help gen", "gen --help", "gen -h",
                "verify --help", "profile --help", "model --help", "model build --help",
                "tree --help", "tree gen --help", "analyze --help", "completion --help",
                "completion bash", "completion zsh", "completion fish"]


@pytest.mark.parametrize("args", HELP_OUTPUTS)
def test_help_and_version_report_a_closed_stdout(cli, args):
    """`testdata --help >&-` exited 0 with the help lost: every help,
    version and completion output is checked at exit, like any output."""
    p = subprocess.run(f"exec '{cli}' {args} >&-", shell=True, stderr=subprocess.PIPE)
    assert p.returncode == 1, (args, p.stderr)
    assert p.stderr == b"testdata: write error on stdout: Bad file descriptor\n", (args, p.stderr)


@pytest.mark.parametrize("args", HELP_OUTPUTS)
def test_help_and_version_report_a_full_disk(cli, args):
    with open("/dev/full", "wb") as full:
        p = subprocess.run([cli, *args.split()], stdout=full, stderr=subprocess.PIPE)
    assert p.returncode == 1, (args, p.stderr)
    assert p.stderr == b"testdata: write error on stdout: No space left on device\n", \
        (args, p.stderr)


@pytest.mark.parametrize("args", ["--help", "gen --help", "--version", "completion bash"])
def test_help_to_a_good_stdout_exits_0(cli, args):
    p = subprocess.run([cli, *args.split()], capture_output=True)
    assert p.returncode == 0 and p.stdout and p.stderr == b"", (args, p.stderr)


# --- --files, analyze, messages --------------------------------------------------------

@pytest.mark.parametrize("files", ["1E", "0", "1000001"])
def test_files_is_bounded(cli, tmp_path, files):
    r = gen(cli, "zero", "1M", "--mpi", "--files", files, "-o", tmp_path / "d")
    assert r.returncode == 2 and b"--files" in r.stderr
    assert not (tmp_path / "d").exists()


def test_files_not_more_than_bytes(cli, tmp_path):
    r = gen(cli, "zero", "10", "--mpi", "--files", "11", "-o", tmp_path / "d")
    assert r.returncode == 2 and b"more files than" in r.stderr


def test_analyze_takes_any_number_of_files(cli, tmp_path):
    paths = []
    for i in range(100):
        p = tmp_path / f"f{i}"
        p.write_bytes(b"x" * i)
        paths.append(str(p))
    r = subprocess.run([cli, "analyze", "--json", *paths], capture_output=True)
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)) == 100


def test_seed_random_then_a_number(cli):
    r = subprocess.run([cli, "gen", "random", "1K", "--seed=random", "--seed=5"],
                       capture_output=True)
    assert r.returncode == 0 and b"reproduce" not in r.stderr
    want = subprocess.run([cli, "gen", "random", "1K", "--seed", "5"], capture_output=True)
    assert r.stdout == want.stdout


def test_kept_bytes_figure_is_true(cli, tmp_path):
    f = tmp_path / "f"
    r = gen(cli, "random", "4M", "-o", f, "--keep-partial",
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1000000, 1000000)))
    assert r.returncode == 1
    size = f.stat().st_size
    assert f"kept the incomplete '{f}' ({size} bytes)".encode() in r.stderr


def test_verify_past_the_end_of_the_stream_is_long(cli):
    r = subprocess.run([cli, "verify", "random", "inf", "--offset", str((1 << 64) - 2)],
                       input=b"ab", capture_output=True)
    assert r.returncode == 1
    assert b"is long" in r.stderr and b"out of range" not in r.stderr


def test_analyze_json_with_a_name_that_is_not_utf8(cli, tmp_path):
    name = os.fsencode(tmp_path) + b"/caf\xe9\xff.bin"
    with open(name, "wb") as f:
        f.write(b"x" * 1000)
    r = subprocess.run([os.fsencode(cli), b"analyze", b"--json", name], capture_output=True)
    assert r.returncode == 0
    report = json.loads(r.stdout.decode("utf-8"))  # valid JSON, valid UTF-8
    assert os.fsencode(report[0]["file"]) == name  # surrogateescape round trip


def test_long_file_name(cli, tmp_path):
    f = tmp_path / ("n" * 250)
    assert gen(cli, "random", "1000", "-o", f).returncode == 0
    assert verifies(cli, f, "random", 1000)


def test_sigint_leaves_no_temporary(cli, tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"precious")
    p = subprocess.Popen([cli, "gen", "random", "100G", "--algorithm", "fast", "-o", f],
                         stderr=subprocess.PIPE)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=20)
    assert p.returncode == 130
    assert f.read_bytes() == b"precious" and os.listdir(tmp_path) == ["f"]
