"""`-o PATH` writes through what is at the path: a device, a FIFO, a process
substitution's pipe and a symlink's target get the bytes; nothing there is replaced by a
regular file. A regular file is still replaced atomically. Everything is made in a
temporary directory (a link there may point at /dev/null; /dev/null itself is only read)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import threading

from tests.conftest import EXAMPLES, ROOT, run_cli

PLAN = str(EXAMPLES / "three_targets.yaml")


def _expected() -> bytes:
    r = run_cli("solve", PLAN, "-q")
    assert r.returncode == 0
    return r.stdout


def test_symlink_to_a_file_stays_a_link_and_its_target_gets_the_artifact(tmp_path):
    target = tmp_path / "real.json"
    target.write_bytes(b"old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    r = run_cli("solve", PLAN, "-q", "-o", str(link))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == _expected()


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "new.json")
    assert run_cli("solve", PLAN, "-q", "-o", str(link)).returncode == 0
    assert link.is_symlink() and (tmp_path / "new.json").read_bytes() == _expected()


def _device(tmp_path):
    """A character device inside tmp_path: a null device node of our own where the
    machine lets us make one (root), else a link to the system's (only written through)."""
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError:
        node.symlink_to(os.devnull)
    return node


def test_a_device_is_written_through_not_replaced(tmp_path):
    dev = _device(tmp_path)
    was_link = dev.is_symlink()
    r = run_cli("solve", PLAN, "-q", "-o", str(dev))
    assert r.returncode == 0, r.stderr
    assert dev.is_symlink() == was_link
    assert stat.S_ISCHR(os.stat(dev).st_mode)
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
    link = tmp_path / "to-null"
    link.symlink_to(dev)
    assert run_cli("solve", PLAN, "-q", "-o", str(link)).returncode == 0
    assert link.is_symlink() and stat.S_ISCHR(os.stat(dev).st_mode)


def test_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    r = run_cli("solve", PLAN, "-q", "-o", str(fifo))
    still_a_fifo = stat.S_ISFIFO(os.lstat(fifo).st_mode)
    if reader.is_alive():  # nothing was written into the FIFO: free the reader
        try:
            fd = os.open(str(fifo), os.O_WRONLY | os.O_NONBLOCK) if still_a_fifo else -1
        except OSError:  # ENXIO: the reader has just closed its end (it got the bytes)
            fd = -1
        if fd >= 0:
            os.close(fd)
    reader.join(timeout=5)
    assert r.returncode == 0, r.stderr
    assert still_a_fifo
    assert got == [_expected()]


def test_process_substitution(tmp_path):
    assert shutil.which("bash"), "the tests need bash for a process substitution"
    out = tmp_path / "count"
    script = f'"{sys.executable}" -m placement_cli solve "{PLAN}" -q -o >(wc -c > "{out}"); wait'
    r = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for _ in range(100):
        if out.exists() and out.read_text().strip():
            break
        threading.Event().wait(0.05)
    assert int(out.read_text()) == len(_expected())


def test_run_out_dir_writes_through_a_linked_artifact(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    real = tmp_path / "kept.json"
    real.write_bytes(b"old")
    (out / "solve.json").symlink_to(real)
    r = run_cli("run", PLAN, "-q", "--out-dir", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "solve.json").is_symlink()
    assert real.read_bytes() == (_expected())
