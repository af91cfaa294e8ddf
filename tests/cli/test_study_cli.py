"""``structext study create|add-annotators|close|reopen``: studies from a script, with the checks of
the lead's form; every refusal one line naming what, exit 2, nothing written."""
from __future__ import annotations

import shutil

import pytest

from structext_core.cli.main import main


@pytest.fixture
def scripted(tmp_path, monkeypatch):
    """A database with two annotators and a researcher, and the lab's own sample set in its folder."""
    from structext_core.evaluation import item_sets
    from structext_core.labset import member
    from structext_core.studio import accounts, storage
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    for name, role in (("ann1", "annotator"), ("ann2", "annotator"), ("res", "researcher")):
        accounts.create_user(db, name, "password1", role)
    item_sets.data_dir("labset").mkdir(parents=True)
    shutil.copyfile(member.SAMPLE_ITEMS, item_sets.data_dir("labset") / "sample.jsonl")
    return db


def test_a_study_is_created_given_people_closed_and_reopened(scripted, capsys):
    from structext_core.studio import study
    assert main(["study", "create", "scripted", "--benchmark", "labset", "--items", "sample.jsonl",
                 "--questions", "6", "--annotator", "ann1", "--practice", "2", "--seed", "3"]) == 0
    assert "created study 'scripted'" in capsys.readouterr().out
    (created,) = study.list_studies(scripted)
    assert (created.suite, created.seed, created.benchmark) == ("sample.jsonl", 3, "labset")
    kinds = dict(scripted.execute("SELECT kind, COUNT(*) FROM study_items WHERE study_id = ? GROUP BY kind",
                                  [created.id]).fetchall())
    assert kinds == {"study": 6, "practice": 2}
    assert main(["study", "add-annotators", "scripted", "ann2"]) == 0
    assert [m.username for m in study.study_members(scripted, created.id)] == ["ann1", "ann2"]
    assert main(["study", "close", str(created.id)]) == 0 and study.get_study(scripted, created.id).status == "closed"
    assert main(["study", "reopen", "scripted"]) == 0 and study.get_study(scripted, created.id).status == "open"


@pytest.mark.parametrize("args, says", [
    (["--benchmark", "nope"], "--benchmark: no benchmark 'nope'"),
    (["--benchmark", "aibench"], "reads no item files"),
    (["--items", "missing.jsonl"], "'missing.jsonl' is no item file"),
    (["--questions", "99"], "Number of questions must be between 1 and 12"),
    (["--annotator", "res"], "no annotator account named 'res'"),
    (["--practice", "99"], "Practice items must be between 0 and 20"),
])
def test_a_study_that_cannot_be_made_is_refused_in_one_line_and_nothing_is_written(scripted, capsys, args, says):
    from structext_core.studio import study
    given = {"--benchmark": "labset", "--items": "sample.jsonl", "--questions": "6", "--annotator": "ann1"}
    given.update(dict(zip(args[::2], args[1::2])))
    assert main(["study", "create", "pilot", *[part for pair in given.items() for part in pair]]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
    assert study.list_studies(scripted) == []
