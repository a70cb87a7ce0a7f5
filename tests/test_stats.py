import numpy as np

from bfs.harness.stats import graph500_statistics, output_block, quartiles


def test_quartiles_integer_index_rule():
    q = quartiles([5, 1, 4, 2, 3])  # sorted 1..5, n=5
    assert q["min"] == 1 and q["max"] == 5
    assert q["firstquartile"] == (2 + 2) / 2   # x[1], x[1]
    assert q["median"] == 3
    assert q["thirdquartile"] == (4 + 4) / 2
    q = quartiles([1, 2, 3, 4])  # n=4: Q1 = (x[0]+x[1])/2
    assert q["firstquartile"] == 1.5 and q["median"] == 2.5 and q["thirdquartile"] == 3.5
    assert np.isclose(q["stddev"], np.std([1, 2, 3, 4], ddof=1))


def test_teps_are_harmonic():
    times, nedges = [1.0, 2.0, 4.0], [100, 100, 100]
    st = graph500_statistics(times, nedges, [0.1] * 3)["TEPS"]
    assert np.isclose(st["harmonic_mean"], 3 / sum(t / n for t, n in zip(times, nedges)))
    assert np.isclose(st["min"], 25) and np.isclose(st["max"], 100)
    s = np.array(times) / np.array(nedges)
    assert np.isclose(st["harmonic_stddev"], s.std(ddof=1) / (s.mean() ** 2 * np.sqrt(2)))


def test_output_block_labels_in_column_32():
    stats = graph500_statistics([1.0, 2.0], [10, 20], [0.5, 0.5])
    block = output_block(scale=10, edgefactor=16, nbfs=2, graph_generation=1.5,
                         num_mpi_processes=1, construction_time=0.25, stats=stats)
    lines = block.splitlines()
    assert lines[0] == "SCALE:" + " " * 26 + "10"
    assert all(len(l) > 32 and l[31] == " " and l[32] != " " for l in lines)
    hm = [l for l in lines if "harmonic_mean_TEPS" in l][0]
    assert hm.startswith("bfs  harmonic_mean_TEPS:     !  ")
    assert [l.split(":")[0] for l in lines[:6]] == [
        "SCALE", "edgefactor", "NBFS", "graph_generation", "num_mpi_processes",
        "construction_time"]
    assert len(lines) == 6 + 7 + 7 + 5 + 2 + 7
