"""testdata.dask: shards written and verified by a Dask LocalCluster with 2 workers."""
import os
import pathlib

import pytest

import testdata

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
tdd = pytest.importorskip("testdata.dask")

TOTAL = 5 * (1 << 20) + 12345        # 6 shards, the last one short
SHARD = 1 << 20


@pytest.fixture(scope="module")
def client():
    # processes=False: quick to start; the bytes are produced by the C
    # library with the GIL released, so two threaded workers still overlap.
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=":0")
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def concat(paths):
    return b"".join(p.read_bytes() for p in paths)


def test_shard_ranges_tile_the_stream():
    assert tdd.shard_ranges(TOTAL, SHARD) == [(i * SHARD, min(SHARD, TOTAL - i * SHARD))
                                              for i in range(6)]
    assert tdd.shard_ranges(0, SHARD) == []
    assert tdd.shard_ranges("2M", "1M") == [(0, 1 << 20), (1 << 20, 1 << 20)]
    with pytest.raises(ValueError):
        tdd.shard_ranges(10, 0)
    with pytest.raises(ValueError):
        tdd.shard_ranges("inf", 10)


def test_split_range_matches_docs():
    assert testdata.split_range((10 << 20) + 1, 3, 2, align=1 << 20) == (8 << 20, (2 << 20) + 1)
    assert testdata.split_range(10, 4, 3, align=16) == (10, 0)
    with pytest.raises(ValueError):
        testdata.split_range(10, 0, 0)
    with pytest.raises(ValueError):
        testdata.split_range(10, 2, 2)


def test_write_with_offset(tmp_path):
    p = testdata.write(tmp_path / "x", "random", 1000, seed=3, offset=12345, algorithm="fast")
    assert p.read_bytes() == testdata.generate("random", 1000, seed=3, offset=12345,
                                               algorithm="fast")
    with pytest.raises(ValueError):
        testdata.write(tmp_path / "y", "zero", 2, offset=(1 << 64) - 1)
    assert not (tmp_path / "y").exists()


@pytest.mark.parametrize("kind,opts", [("random", {}), ("random", {"algorithm": "fast"}),
                                       ("zero", {})])
def test_shards_concatenate_to_single_stream(client, tmp_path, kind, opts):
    paths = tdd.write_shards(tmp_path / "ds", kind, TOTAL, SHARD, seed=11, **opts)
    assert [p.name for p in paths] == [f"part-{i:06d}" for i in range(6)]
    assert [p.stat().st_size for p in paths] == [SHARD] * 5 + [TOTAL - 5 * SHARD]
    assert concat(paths) == testdata.generate(kind, TOTAL, seed=11, **opts)
    assert tdd.verify_shards(tmp_path / "ds", kind, TOTAL, SHARD, seed=11, **opts) is None
    # Any one shard verifies alone, at its offset.
    testdata.verify(paths[3], kind, SHARD, seed=11, offset=3 * SHARD, **opts)


def test_tasks_ran_on_the_cluster(client, tmp_path):
    tasks = tdd.write_shards(tmp_path / "ds", "random", "4M", "1M", compute=False)
    futures = client.compute(tasks)
    paths = client.gather(futures)
    assert len(paths) == 4
    workers = {w for fs in client.who_has(futures).values() for w in fs}
    assert workers <= set(client.scheduler_info()["workers"])
    assert concat(map(pathlib.Path, paths)) == testdata.generate("random", "4M")


def test_verify_reports_first_flipped_byte(client, tmp_path):
    d = tmp_path / "ds"
    paths = tdd.write_shards(d, "random", TOTAL, SHARD, seed=5)
    # Flip bytes in shards 4 and 2: the lowest stream offset wins.
    for shard, pos in ((4, 77), (2, 1000), (2, 5000)):
        with open(paths[shard], "r+b") as f:
            f.seek(pos)
            b = f.read(1)
            f.seek(pos)
            f.write(bytes([b[0] ^ 0x10]))
    with pytest.raises(testdata.MismatchError) as e:
        tdd.verify_shards(d, "random", TOTAL, SHARD, seed=5)
    assert e.value.offset == 2 * SHARD + 1000
    assert e.value.reason == "differs"
    assert "part-000002" in str(e.value) and "2 bad shards" in str(e.value)
    # The CLI-equivalent single-shard check agrees.
    with pytest.raises(testdata.MismatchError) as e1:
        testdata.verify(paths[2], "random", SHARD, seed=5, offset=2 * SHARD)
    assert e1.value.offset == 2 * SHARD + 1000


def test_verify_short_missing_and_extra_shards(client, tmp_path):
    d = tmp_path / "ds"
    paths = tdd.write_shards(d, "zero", TOTAL, SHARD)
    os.truncate(paths[5], 10)
    with pytest.raises(testdata.MismatchError) as e:
        tdd.verify_shards(d, "zero", TOTAL, SHARD)
    assert (e.value.offset, e.value.reason) == (5 * SHARD + 10, "short")
    paths[1].unlink()
    with pytest.raises(testdata.MismatchError) as e:
        tdd.verify_shards(d, "zero", TOTAL, SHARD)
    assert (e.value.offset, e.value.reason) == (SHARD, "missing")
    tdd.write_shards(d, "zero", TOTAL, SHARD)
    (d / "part-000006").write_bytes(b"x")
    with pytest.raises(testdata.MismatchError) as e:
        tdd.verify_shards(d, "zero", TOTAL, SHARD)
    assert (e.value.offset, e.value.reason) == (TOTAL, "long")


def test_bad_arguments_fail_before_any_task(tmp_path):
    with pytest.raises(ValueError, match="unknown kind"):
        tdd.write_shards(tmp_path / "a", "nope", 10, 5)
    with pytest.raises(ValueError):
        tdd.write_shards(tmp_path / "b", "zero", 10, 5, algorithm="fast")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    with pytest.raises(FileNotFoundError):
        tdd.verify_shards(tmp_path / "none", "zero", 10, 5)


def test_process_workers(tmp_path):
    """Shards written by worker processes (arguments and results pickled)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        paths = tdd.write_shards(tmp_path / "ds", "random", "3M", "1M", seed=2, algorithm="fast")
        assert concat(paths) == testdata.generate("random", "3M", seed=2, algorithm="fast")
        with open(paths[1], "r+b") as f:
            f.write(b"\0")
        with pytest.raises(testdata.MismatchError) as e:
            tdd.verify_shards(tmp_path / "ds", "random", "3M", "1M", seed=2, algorithm="fast")
        assert e.value.offset == 1 << 20


TREE = dict(files=3000, total="6M", seed=21, kind="compressible", ratio=2)


def test_tree_in_parts_is_the_single_tree(client, tmp_path):
    d = tdd.write_tree(tmp_path / "t", parts=5, **TREE)
    assert tdd.verify_tree(d, parts=3, **TREE) is None
    testdata.verify_tree(d, **TREE)  # the same files as one process writes
    t = testdata.Tree(**TREE)
    os.unlink(d / t[2999].path)
    os.truncate(d / t[5].path, 1)
    (d / "extra.bin").write_bytes(b"x")
    with pytest.raises(testdata.TreeMismatchError) as ei:
        tdd.verify_tree(d, parts=4, **TREE)
    f = ei.value.findings
    assert f[0].startswith(f"wrong size: {t[5].path}") and f[1].startswith(f"missing: {t[2999].path}")
    assert f[2].startswith("extra: extra.bin")
    assert (ei.value.missing_files, ei.value.wrong_size, ei.value.extra_entries) == (1, 1, 1)
    with pytest.raises(ValueError):
        tdd.write_tree(tmp_path / "u", files=3, sizes="nonsense")
