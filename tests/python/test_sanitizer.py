"""In sanitizer builds (TD_EXPECT_ASAN=1, set by tests/CMakeLists.txt), make
sure these tests really exercise an instrumented library: the extension
module is built with AddressSanitizer, the runtime is loaded in this
process, and a memory error in the module would abort the run rather than
pass unnoticed.  Elsewhere, nothing to check."""
import ctypes
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("TD_EXPECT_ASAN") != "1",
                                reason="not a sanitizer build")


def test_extension_module_is_instrumented():
    import testdata  # noqa: F401  (loads the extension module)
    mods = {m for m in open("/proc/self/maps").read().split() if "_capi" in m}
    assert mods, "the extension module is not loaded"
    for m in mods:
        with open(m, "rb") as f:
            assert b"__asan_init" in f.read(), f"{m} is not built with AddressSanitizer"


def test_asan_runtime_is_loaded():
    maps = open("/proc/self/maps").read()
    assert "libasan" in maps, "libasan is not preloaded"
    assert hasattr(ctypes.CDLL(None), "__asan_report_error")


def test_a_memory_error_aborts():
    """A heap overflow in this interpreter (through ctypes, with the runtime
    preloaded as for these tests) is reported and kills the process."""
    code = ("import ctypes; b = ctypes.CDLL(None).malloc; b.restype = ctypes.c_void_p; "
            "p = b(16); ctypes.memmove(p + 16, b'x', 1)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert r.returncode != 0
    assert b"AddressSanitizer: heap-buffer-overflow" in r.stderr, r.stderr[-2000:]
