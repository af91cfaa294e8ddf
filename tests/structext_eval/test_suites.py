import collections
import hashlib
import json

import pytest

from structext_core.structext_eval import samples, suites
from structext_core.structext_eval.tasks import TASKS
from structext_core.structext_eval.tree import node_count

SPEC_MEAN_LENGTH = {(1, 1): 100, (1, 2): 158, (1, 3): 195, (2, 1): 545, (2, 2): 1644, (2, 3): 3443,
                    (3, 1): 4502, (3, 2): 31567, (3, 3): 103006}


@pytest.fixture(scope="module")
def test_hard():
    return suites.generate_suite("test-hard", seed=0)


def _digest(rows):
    return hashlib.sha256("\n".join(json.dumps(r, sort_keys=True) for r in rows).encode()).hexdigest()


def test_test_suite_composition():
    rows = suites.generate_suite("test", seed=0)
    assert len(rows) == 3712
    cells = collections.Counter((r["task_id"], r["depth"], r["width"]) for r in rows)
    assert set(cells.values()) == {64}
    assert set(cells) == {(t, d, 1) for t in TASKS for d in (1, 2)}
    assert len({r["id"] for r in rows}) == 3712


def test_test_hard_composition(test_hard):
    assert len(test_hard) == 2088
    cells = collections.Counter((r["task_id"], r["depth"], r["width"]) for r in test_hard)
    assert set(cells.values()) == {8}
    assert len(cells) == 29 * 9


def test_test_hard_lengths_near_the_original(test_hard):
    lengths = collections.defaultdict(list)
    for r in test_hard:
        lengths[(r["depth"], r["width"])].append(len(r["reference"]))
    for cell, want in SPEC_MEAN_LENGTH.items():
        mean = sum(lengths[cell]) / len(lengths[cell])
        assert 0.8 * want <= mean <= 1.25 * want, (cell, mean, want)


def test_same_seed_same_bytes_other_seed_other_bytes(test_hard):
    again = suites.generate_suite("test-hard", seed=0)
    assert _digest(again) == _digest(test_hard)
    other = suites.generate_suite("test-hard", seed=1)
    assert _digest(other) != _digest(test_hard)


def test_any_sample_rebuilds_alone(test_hard):
    sample = test_hard[1234]
    alone = suites.generate_sample(sample["task_id"], sample["depth"], sample["width"], seed=0,
                                   index=int(sample["id"].rsplit("-", 1)[1]), suite="test-hard")
    assert alone == sample


def test_generation_ignores_global_random_state():
    import random
    random.seed(1)
    a = suites.generate_cell(8, 2, 2, 3, seed=5)
    random.seed(99)
    random.random()
    b = suites.generate_cell(8, 2, 2, 3, seed=5)
    assert a == b


def test_sample_schema_fields():
    from structext_core.structext_eval.samples import FIELDS
    s = suites.generate_sample(11, 2, 1, seed=3)
    assert list(s) == FIELDS
    assert s["suite"] == "custom" and s["task"] == "PathCompose" and s["params"]["value"] in s["reference"]


@pytest.mark.parametrize("kwargs,message", [
    (dict(depths=(0,), widths=(1,), per_cell=1), "depth and width start at 1"),
    (dict(depths=(1,), widths=(1,), per_cell=0), "per-task"),
    (dict(depths=(4,), widths=(4,), per_cell=1), "nodes per document"),
    (dict(depths=(1,), widths=(1,), per_cell=1, task_ids=(30,)), "unknown task"),
    (dict(depths=(6,), widths=(1,), per_cell=1, task_ids=(24,)), "(?i)latex has headings"),
])
def test_custom_grid_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        suites.SuiteConfig("custom", **kwargs).validate()


def test_csv_rows_option_makes_bigger_tables():
    s = suites.generate_sample(2, 1, 1, csv_rows=30)
    assert s["reference"].count("\n") == 2 * 30 + 2
    default = suites.generate_sample(2, 2, 1)
    assert default["reference"].count("\n") == 2 * 2 + 2


def test_load_or_generate_writes_once(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setitem(suites.SUITES, "tiny", suites.SuiteConfig("tiny", (1,), (1,), 1, task_ids=(1, 5)))
    rows = suites.load_or_generate("tiny", data_dir=tmp_path, progress=lambda d, t: calls.append((d, t)))
    assert len(rows) == 2 and calls[-1] == (2, 2)
    assert (tmp_path / "tiny.jsonl").exists()
    calls.clear()
    assert suites.load_or_generate("tiny", data_dir=tmp_path, progress=lambda d, t: calls.append(d)) == rows
    assert calls == []  # read back, not generated again


# ---- size limits and estimates (issue 11) ---------------------------------------------------

def test_capped_node_count_is_exact_below_the_cap_and_instant_above():
    for depth in range(1, 7):
        for width in range(1, 5):
            assert suites.capped_node_count(depth, width, 10**12) == node_count(depth, width)
    assert suites.capped_node_count(10**9, 10**9, 60_000) == 60_001  # no 10**18-digit numbers


@pytest.mark.parametrize("name", ["test", "test-hard"])
def test_size_estimate_is_close_to_the_real_file(name, test_hard):
    rows = test_hard if name == "test-hard" else suites.generate_suite("test", seed=0)
    real = sum(len(json.dumps(r, ensure_ascii=False)) + 1 for r in rows)
    estimate = suites.SUITES[name].estimated_chars()
    assert 0.8 < estimate / real < 1.25, (estimate, real)


@pytest.mark.parametrize("kwargs,message", [
    (dict(depths=(7,), widths=(1,), per_cell=1, task_ids=(8,)), "more than 60,000 nodes per document"),
    (dict(depths=(1,), widths=(1,), per_cell=10_001), "above the limit of 10,000 samples per task"),
    (dict(depths=(1,), widths=(1,), per_cell=1, csv_rows=100_001, task_ids=(1,)), "above the limit of 100,000 rows"),
    (dict(depths=(1,), widths=(1,), per_cell=1, col=51), "col 51 is above the limit of 50"),
    (dict(depths=(1,), widths=tuple(range(1, 201)), per_cell=200), "the limit is 1,000,000 samples"),
    (dict(depths=(3,), widths=(3,), per_cell=10_000, task_ids=(8,)), "characters of JSONL; the limit is"),
])
def test_default_size_limits_and_allow_large(kwargs, message):
    with pytest.raises(suites.SizeLimitError, match=message):
        suites.SuiteConfig("custom", **kwargs).validate()
    suites.SuiteConfig("custom", **kwargs, allow_large=True).validate()  # validated only: nothing is built


def test_limits_that_allow_large_does_not_lift():
    with pytest.raises(ValueError, match="a grid takes at most 1,000"):
        suites.SuiteConfig("custom", depths=(1,), widths=tuple(range(1, 1002)), per_cell=1, allow_large=True).validate()
    with pytest.raises(ValueError, match="GB of memory to build"):
        suites.SuiteConfig("custom", depths=(10**6,), widths=(1,), per_cell=1, task_ids=(8,),
                           allow_large=True).validate()


@pytest.mark.parametrize("name,message", [
    ("a" * 65, "the suite name is 65 characters long; the limit is 64 characters"),
    ("pilot\n", "letters, digits, - and _ only"),
    ("../x", "letters, digits, - and _ only"),
])
def test_suite_names_are_bounded(name, message):
    with pytest.raises(ValueError, match=message):
        suites.check_suite_name(name)
    assert suites.check_suite_name("a" * 64) == "a" * 64


# ---- suite files: listing, the default suites, importing the authors' release --------------

def test_suite_files_listed_defaults_first(tmp_path):
    for name in ("zeta", "test-hard", "test"):
        samples.write_jsonl(tmp_path / f"{name}.jsonl", [])
    assert [f.stem for f in suites.suite_files(tmp_path)] == ["test", "test-hard", "zeta"]
    assert suites.missing_default_suites(tmp_path) == []
    assert suites.missing_default_suites(tmp_path / "nothing") == ["test", "test-hard"]


def test_import_official_serves_the_released_samples(official_dir, tmp_path):
    count, problems = suites.import_official(official_dir, "released", data_dir=tmp_path)
    assert count == 116 and problems == []
    rows = samples.read_jsonl(tmp_path / "released.jsonl")
    assert {r["suite"] for r in rows} == {"released"} and len({r["task_id"] for r in rows}) == 29
    from structext_core.structext_eval import audit
    assert audit.audit([tmp_path / "released.jsonl"]).line() == "audited 116 samples: 116 agree, 0 disagree, 0 unsupported"


def test_import_official_names_bad_files_and_writes_nothing_without_samples(tmp_path):
    folder = tmp_path / "rel"
    (folder / "0Shotbenchmark" / "json" / "PathWalk").mkdir(parents=True)
    (folder / "0Shotbenchmark" / "json" / "PathWalk" / "1.x_1.json").write_text("{broken")
    count, problems = suites.import_official(folder, "rel", data_dir=tmp_path)
    assert count == 0 and len(problems) == 1 and "1.x_1.json: not valid JSON" in problems[0]
    assert not (tmp_path / "rel.jsonl").exists()
    with pytest.raises(ValueError, match="default suite"):
        suites.import_official(folder, "test", data_dir=tmp_path)
    with pytest.raises(ValueError, match="letters, digits"):
        suites.import_official(folder, "../evil", data_dir=tmp_path)
