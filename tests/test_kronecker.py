"""The Kronecker generator against the Graph500 reference's public test vectors."""
import hashlib
import json

import numpy as np
import pyarrow.dataset as pads
import pytest

from bfs.graphs import kronecker, prng
from bfs.errors import BfsError
from bfs.graphs.graphdir import read_edges, read_meta


@pytest.fixture(scope="module")
def scale10():
    return kronecker.generate_edges(10, 16)


def edge_list(src, dst):
    return list(zip(src.tolist(), dst.tolist()))


def test_scramble_keys():
    val0, val1 = kronecker.scramble_keys((2, 3))
    assert val0 == 0x62AF6660B44FCE69
    assert val1 == 0x2A3D763B3A6B1F0C


def test_scale4_first_edges():
    src, dst = kronecker.generate_edges(4, 2)
    assert len(src) == 2 * 16
    assert edge_list(src[:8], dst[:8]) == [(15, 3), (15, 12), (7, 12), (15, 15), (15, 15),
                                           (1, 13), (15, 4), (15, 15)]


def test_scale10_first_edges(scale10):
    src, dst = scale10
    assert edge_list(src[:10], dst[:10]) == [(299, 797), (684, 861), (185, 385), (428, 328),
                                             (490, 200), (976, 998), (96, 959), (684, 699),
                                             (684, 923), (914, 503)]


def test_scale10_whole_list(scale10):
    src, dst = scale10
    assert src.dtype == dst.dtype == np.uint32
    assert len(src) == 16 * 1024
    assert int(np.count_nonzero(src == dst)) == 144
    text = "".join(f"{s} {d}\n" for s, d in zip(src.tolist(), dst.tolist()))
    assert hashlib.md5(text.encode()).hexdigest() == "f88082b80584251192eda118ca1f8c5f"


def test_version_2_1_4_first_edges():
    src, dst = kronecker.generate_edges(10, 16, seeds=(0xDECAFBAD, 0xDECAFBAD),
                                        version="2.1.4", stop=5)
    assert edge_list(src, dst) == [(43, 928), (87, 989), (815, 345), (858, 772), (898, 176)]


def test_sub_ranges_concatenate_to_whole():
    whole_src, whole_dst = kronecker.generate_edges(12, 3)
    n = len(whole_src)
    # Odd boundaries straddle the generator's internal blocks.
    cuts = [0, 1, 4095, 4097, 5000, 9999, n - 1, n]
    parts = [kronecker.generate_edges(12, 3, start=lo, stop=hi) for lo, hi in zip(cuts, cuts[1:])]
    assert np.array_equal(np.concatenate([p[0] for p in parts]), whole_src)
    assert np.array_equal(np.concatenate([p[1] for p in parts]), whole_dst)


def test_labels_stay_in_range():
    src, dst = kronecker.generate_edges(13, 2)
    assert int(src.max()) < 2**13 and int(dst.max()) < 2**13


@pytest.mark.parametrize("scale", [1, 6, 11])
def test_scramble_is_a_bijection(scale):
    val0, val1 = kronecker.scramble_keys((2, 3))
    args = (np.uint64(64 - scale), np.uint64((val0 + val1) % 2**64),
            np.uint64(val0 | 0x4519840211493211), np.uint64(val1 | 0x3050852102C843A5))
    labels = [int(kronecker._scramble(np.uint64(v), *args)) for v in range(2**scale)]
    assert sorted(labels) == list(range(2**scale))
    assert labels != list(range(2**scale))


def test_different_seeds_give_different_graphs():
    a = kronecker.generate_edges(8, 4, seeds=(2, 3))
    b = kronecker.generate_edges(8, 4, seeds=(3, 2))
    assert not np.array_equal(a[0], b[0])


@pytest.mark.parametrize("k", [0, 1, 2, 5, 6, 37, 200])
def test_skip_equals_steps(k):
    state = prng.seed_state(2, 3)
    _, stepped = prng.draws(state, k)
    assert np.array_equal(prng.skip(state, k), stepped)


def test_step_matches_recurrence():
    state = prng.seed_state(12345, 2**64 - 1)
    outs, _ = prng.draws(state, 12)
    x = [int(v) for v in state[::-1]] + [int(v) for v in outs]  # oldest first
    for n in range(5, len(x)):
        assert x[n] == (107374182 * x[n - 1] + 104480 * x[n - 5]) % prng.MODULUS


def test_seed_state_layout():
    u1, u2 = 0xF000000000000002, 0x3000000000000003
    assert prng.seed_state(u1, u2).tolist() == [3, 1, 4, 1, (3 << 4) + 15 + 1]


def test_table_skip_matches_exact_skip():
    state = prng.seed_state(2, 3)
    table = prng.stride_power_table()
    for count in [1, 2, 3, 1000, 2**40 + 12345]:
        via_table = prng.skip_by_table(table, tuple(state), np.uint64(count))
        assert list(via_table) == prng.skip(state, count << 64).tolist()


def test_mod_m_extremes():
    m = prng.MODULUS
    for x in [0, 1, m - 1, m, m + 1, 2 * m - 1, 2 * m, 2 * m + 1, 2**32, 2**35 - 1,
              (m - 1) * 107374182 + (m - 1) * 104480, 2**61 - 1]:
        assert int(prng.mod_m(np.uint64(x))) == x % m


@pytest.mark.parametrize("kwargs, message", [
    (dict(scale=0), "scale"),
    (dict(scale=41), "scale"),
    (dict(scale=4, edgefactor=0), "edgefactor"),
    (dict(scale=4, version="2.0"), "version"),
    (dict(scale=4, seeds=(-1, 3)), "seeds"),
    (dict(scale=4, start=5, stop=4), "range"),
    (dict(scale=4, stop=16 * 16 + 1), "range"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(BfsError, match=message):
        kronecker.generate_edges(**kwargs)


def test_write_kronecker(tmp_path, scale10):
    out = tmp_path / "g"
    calls = []
    meta = kronecker.write_kronecker(out, 10, 16, chunk_edges=5000,
                                     progress=lambda done, total: calls.append((done, total)))
    assert calls == [(5000, 16384), (10000, 16384), (15000, 16384), (16384, 16384)]
    table = pads.dataset(out / "edges").to_table()
    assert table.num_rows == 16384
    assert str(table.schema.field("src").type) == "uint32"
    assert str(table.schema.field("dst").type) == "uint32"
    src, dst = read_edges(out)
    assert np.array_equal(src, scale10[0]) and np.array_equal(dst, scale10[1])
    on_disk = json.loads((out / "graph.json").read_text())
    assert on_disk["name"] == "kron-s10-e16"
    assert on_disk["source"] == "kronecker"
    assert on_disk["n_vertices"] == 1024 and on_disk["n_edges"] == 16384
    assert on_disk["directed_source"] is False
    assert on_disk["scale"] == 10 and on_disk["edgefactor"] == 16
    assert on_disk["seeds"] == [2, 3] and on_disk["graph500_version"] == "3.0"
    assert read_meta(out) == meta


def test_write_kronecker_refuses_existing(tmp_path):
    out = tmp_path / "g"
    kronecker.write_kronecker(out, 4, 2)
    with pytest.raises(BfsError, match="already exists"):
        kronecker.write_kronecker(out, 4, 2)
    kronecker.write_kronecker(out, 5, 2, force=True)
    assert read_meta(out).scale == 5


def test_failed_write_leaves_nothing(tmp_path):
    out = tmp_path / "g"

    def interrupt(done, total):
        if done >= 2000:  # part files already exist by then
            raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        kronecker.write_kronecker(out, 8, 16, chunk_edges=1000, progress=interrupt)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []
