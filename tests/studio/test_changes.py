from structext_core.studio import changes, storage


def test_history_newest_first_by_target_and_prefix(tmp_path):
    db = storage.open_db(tmp_path / "s.db")
    db.execute("INSERT INTO users (username, password_hash, role, created_at) VALUES ('lead', 'x', 'admin', 0)")
    lead = db.execute("SELECT id FROM users").fetchone()[0]
    changes.record(db, lead, "rename", "study:1", old="a", new="b")
    changes.record(db, lead, "override", "response:7", score=1.0, reason="quoted element")
    changes.record(db, None, "archive", "study:10")
    assert [c.action for c in changes.history(db)] == ["archive", "override", "rename"]
    only = changes.history(db, "study:1")
    assert len(only) == 1 and only[0].by == "lead" and only[0].detail == {"new": "b", "old": "a"}
    # a prefix is matched literally: "_" is no LIKE wildcard here
    assert {c.target for c in changes.history(db, prefix="study:")} == {"study:1", "study:10"}
    assert changes.history(db, prefix="study_") == []
    assert changes.history(db, "study:10")[0].by is None
