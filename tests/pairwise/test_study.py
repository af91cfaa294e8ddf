"""The pairwise study in the core: draw, stored sides, swapped repeats, blind images, the clock, votes, results."""
from __future__ import annotations

import io

import pytest
from PIL import Image

from structext_core.aibench import dataset as aibench_dataset
from structext_core.aibench import pairwise as pws
from structext_core.aibench import store as aibench_store
from structext_core.studio.study import ClockSettings, StudyError, TakenOverError

SETTINGS = ClockSettings(heartbeat_seconds=5, idle_pause_seconds=60)


def _create(world, n_pairs=12, practice=1, repeat_share=0.25, seed=3):
    p = world["people"]
    return pws.create_study(world["db"], "pilot", "synthetic", [p["ann1"]["id"], p["ann2"]["id"]], n_pairs=n_pairs,
                            practice=practice, repeat_share=repeat_share, seed=seed, by_user=p["lead"]["id"])


def _tasks(db, user_id):
    return db.execute("SELECT t.id, t.pair_id, t.left_is_a, t.repeat_of, t.position, p.kind FROM pairwise_tasks t"
                      " JOIN pairwise_pairs p ON p.id = t.pair_id WHERE t.user_id = ? ORDER BY position",
                      [user_id]).fetchall()


def test_draw_sides_and_repeats_are_seeded_and_stored(world):
    db, p = world["db"], world["people"]
    study_id = _create(world)
    study = pws.get_study(db, study_id)
    assert study.pairs == 12
    pairs = db.execute("SELECT system_a, system_b FROM pairwise_pairs WHERE study_id = ? AND kind = 'study'",
                       [study_id]).fetchall()
    assert len({tuple(r) for r in pairs}) == 12  # round robin over system pairs: 12 different of the 15
    for who in ("ann1", "ann2"):
        tasks = _tasks(db, p[who]["id"])
        assert tasks[0][5] == "practice"
        repeats = [t for t in tasks if t[3] is not None]
        assert len(repeats) == 3  # 25% of 12
        first = {t[0]: t for t in tasks}
        for t in repeats:
            original = first[t[3]]
            assert original[1] == t[1] and original[2] != t[2]  # same pair, sides swapped
            assert t[4] > original[4] + 1  # later, not right after
    sides = [t[2] for t in _tasks(db, p["ann1"]["id"])]
    assert 0 < sum(sides) < len(sides)  # both sides drawn
    # the same seed gives the same draw for another study
    other = pws.create_study(db, "pilot 2", "synthetic", [p["ann1"]["id"]], n_pairs=12, practice=1,
                             repeat_share=0.25, seed=3)
    assert db.execute("SELECT paper_id, system_a, system_b FROM pairwise_pairs WHERE study_id = ? ORDER BY id",
                      [other]).fetchall() == db.execute(
        "SELECT paper_id, system_a, system_b FROM pairwise_pairs WHERE study_id = ? ORDER BY id", [study_id]).fetchall()


def test_setup_errors_are_clear(world):
    db, p = world["db"], world["people"]
    with pytest.raises(StudyError, match="is an admin, not an annotator"):
        pws.create_study(db, "x", "synthetic", [p["lead"]["id"]], n_pairs=3)
    with pytest.raises(StudyError, match="pairs of images"):
        pws.create_study(db, "x", "synthetic", [p["ann1"]["id"]], n_pairs=1000)
    with pytest.raises(StudyError, match="cannot be read"):
        pws.create_study(db, "x", "nothing-here", [p["ann1"]["id"]], n_pairs=3)
    with pytest.raises(StudyError, match="has no images of 'Nobody'"):
        pws.create_study(db, "x", "synthetic", [p["ann1"]["id"]], n_pairs=3, systems=["Nobody", "Original Image"])
    # issue 31: a name with NUL in it was stored
    with pytest.raises(StudyError, match="invisible character U\\+0000 .* at character 6"):
        pws.create_study(db, "pilot\x00x", "synthetic", [p["ann1"]["id"]], n_pairs=3)
    assert db.execute("SELECT COUNT(*) FROM pairwise_studies").fetchone()[0] == 0


def test_images_are_blind(world):
    db, p = world["db"], world["people"]
    study_id = _create(world)
    view = pws.current_task(db, study_id, p["ann1"]["id"], at=100.0, settings=SETTINGS)
    assert set(vars(view)) == {"token", "position", "total", "done", "practice", "paused", "active_seconds",
                               "held_elsewhere", "pause_reason"}  # nothing that names a system or a paper
    data = aibench_dataset.load_dataset(aibench_store.dataset_path("synthetic"))
    for side in ("left", "right"):
        png = pws.task_image(db, p["ann1"]["id"], view.token, side)
        assert len(png) % pws.SIZE_BUCKET == 0
        for system in data.systems:
            assert system.encode() not in png
        image = Image.open(io.BytesIO(png))
        assert image.info == {} or set(image.info) <= {"dpi"}  # no text chunks, no EXIF, no ICC profile
        image.load()
    with pytest.raises(StudyError, match="not one of yours"):
        pws.task_image(db, p["ann2"]["id"], view.token, "left")


def test_a_pair_is_served_on_one_canvas_at_one_size_with_bytes_of_each_viewer(world, tmp_path):
    """Issue 31: sizes and shapes named systems (a flat 1024 x 1024 image served as 256 KiB, a
    textured 1248 x 832 one as 768 KiB), and every viewer got the same bytes, so the same URL."""
    import random as _random

    rng = _random.Random(0)
    flat, textured = tmp_path / "flat.png", tmp_path / "textured.png"
    Image.new("RGB", (1024, 1024), (250, 250, 250)).save(flat)
    Image.frombytes("RGB", (1248, 832), rng.randbytes(1248 * 832 * 3)).save(textured)
    left, right = pws.served_pair(str(flat), str(textured))
    assert Image.open(io.BytesIO(left)).size == Image.open(io.BytesIO(right)).size == pws.CANVAS
    size = pws._bucket(max(len(left), len(right)) + pws.PAD_OVERHEAD)
    one = [pws.pad_png(png, size, pws.pad_fill(b"viewer-1", side)) for png, side in ((left, "l"), (right, "r"))]
    two = [pws.pad_png(png, size, pws.pad_fill(b"viewer-2", side)) for png, side in ((left, "l"), (right, "r"))]
    assert len({len(png) for png in one + two}) == 1  # one byte size for both sides and every viewer
    assert one[0] != two[0] and one[1] != two[1]  # each viewer's own bytes, so their own URL
    assert one == [pws.pad_png(png, size, pws.pad_fill(b"viewer-1", side)) for png, side in ((left, "l"), (right, "r"))]
    for png in one + two:
        image = Image.open(io.BytesIO(png))
        image.load()  # a valid PNG: the padding is an ancillary chunk decoders skip
        assert image.size == pws.CANVAS
    # letterboxed: the textured image keeps its aspect (1248 x 832 -> 1024 x 683), white bars above and below
    pixels = Image.open(io.BytesIO(right)).convert("RGB")
    assert pixels.getpixel((512, 5)) == (255, 255, 255) and pixels.getpixel((512, 512)) != (255, 255, 255)
    with pytest.raises(ValueError, match="cannot be padded"):
        pws.pad_png(left, len(left))


def test_task_images_are_a_pair_of_one_size_and_differ_per_viewer(world):
    db, p = world["db"], world["people"]
    study_id = _create(world)
    view = pws.current_task(db, study_id, p["ann1"]["id"], at=100.0, settings=SETTINGS)
    a = [pws.task_image(db, p["ann1"]["id"], view.token, side, b"session-a") for side in ("left", "right")]
    b = [pws.task_image(db, p["ann1"]["id"], view.token, side, b"session-b") for side in ("left", "right")]
    assert len(a[0]) == len(a[1]) == len(b[0]) and a[0] != b[0] and a[1] != b[1]


def test_a_vote_with_the_clock_and_sides_undone(world):
    db, p = world["db"], world["people"]
    study_id = _create(world, practice=0)
    ann = p["ann1"]["id"]
    view = pws.current_task(db, study_id, ann, at=100.0, settings=SETTINGS)
    assert view.position == 1 and view.done == 0
    assert pws.heartbeat(db, ann, view.token, at=103.0, settings=SETTINGS) == ("active", pytest.approx(3.0))
    assert db.execute("SELECT active_seconds FROM pairwise_tasks WHERE token = ?", [view.token]).fetchone()[0] == 0
    assert pws.heartbeat(db, ann, view.token, at=105.0, settings=SETTINGS)[0] == "active"  # due: written
    assert db.execute("SELECT active_seconds FROM pairwise_tasks WHERE token = ?",
                      [view.token]).fetchone()[0] == pytest.approx(5.0)
    pws.pause(db, ann, view.token, at=106.0, settings=SETTINGS)
    with pytest.raises(StudyError, match="paused"):
        pws.vote(db, ann, view.token, "left", at=107.0, settings=SETTINGS)
    pws.resume(db, ann, view.token, at=130.0)
    pws.vote(db, ann, view.token, "left", at=133.0, settings=SETTINGS)
    row = db.execute("SELECT v.choice, v.outcome, v.active_seconds, v.paused_seconds, v.wall_seconds, t.left_is_a"
                     " FROM pairwise_votes v JOIN pairwise_tasks t ON t.id = v.task_id").fetchone()
    assert row[0] == "left" and row[1] == ("a" if row[5] else "b")
    assert row[2] == pytest.approx(9.0)  # 100-106 and 130-133 and row[3] == pytest.approx(24.0) and row[4] == pytest.approx(33.0)
    with pytest.raises(StudyError, match="already has your vote"):
        pws.vote(db, ann, view.token, "right", at=134.0, settings=SETTINGS)
    with pytest.raises(StudyError, match="choice is one of"):
        pws.vote(db, ann, "whatever", "middle", at=134.0, settings=SETTINGS)
    nxt = pws.current_task(db, study_id, ann, at=140.0, settings=SETTINGS)
    assert nxt.position == 2 and nxt.token != view.token
    # idle: no input for the idle limit pauses the pair and books the time as idle
    assert pws.heartbeat(db, ann, nxt.token, at=145.0, settings=SETTINGS)[0] == "active"
    assert pws.heartbeat(db, ann, nxt.token, at=201.0, settings=SETTINGS)[0] == "paused"
    idle = db.execute("SELECT idle_seconds, active_seconds FROM pairwise_tasks WHERE token = ?", [nxt.token]).fetchone()
    assert idle[0] > 0 and idle[1] == pytest.approx(0.0)


def test_results_from_votes(world):
    db, p = world["db"], world["people"]
    study_id = _create(world, n_pairs=15, practice=1, repeat_share=0.2)
    systems = aibench_dataset.load_dataset(aibench_store.dataset_path("synthetic")).systems
    hidden = {s: -i for i, s in enumerate(systems)}  # the hidden truth: the data set's order, best first
    clock = 1000.0
    for who in ("ann1", "ann2"):
        uid = p[who]["id"]
        while (view := pws.current_task(db, study_id, uid, at=clock, settings=SETTINGS)) is not None:
            task = db.execute("SELECT p.system_a, p.system_b, t.left_is_a FROM pairwise_tasks t JOIN pairwise_pairs p"
                              " ON p.id = t.pair_id WHERE t.token = ?", [view.token]).fetchone()
            a, b, left_is_a = task
            left, right = (a, b) if left_is_a else (b, a)
            sl, sr = hidden.get(left, 0), hidden.get(right, 0)
            choice = "left" if sl > sr else "right" if sr > sl else "tie"
            clock += 6
            pws.vote(db, uid, view.token, choice, at=clock, settings=SETTINGS)
    res = pws.results(db, study_id, n_boot=50, seed=0)
    assert list(res.ranking.table["system"]) == systems  # 15 pairs = every pair of the 6 systems once
    assert list(res.ranking.table["rank"]) == [1, 2, 3, 4, 5, 6]
    assert res.consistency["repeats"] == 6 and res.consistency["consistency"] == pytest.approx(1.0)
    assert res.agreement["agreement"] == pytest.approx(1.0)
    assert res.votes == 30 and res.annotators == 2
    assert "human rank" in res.table2.columns and len(res.table2) == 6
    assert any(m.startswith("AIBench levels only (") for m in res.fig6b["metric"])  # the synthetic set has no aesthetics
    csv = pws.votes_csv(db, study_id)
    assert csv.splitlines()[0].startswith("annotator,paper_id,system_a")
    assert len(pws.progress(db, study_id)) == 2


# ---------------------------------------------------------------- one tab, input reports (as studies)

def _clock(db, token):
    cursor = db.execute("SELECT active_seconds, away_seconds, idle_seconds, paused_seconds, last_input_at,"
                        " takeovers, idle_pauses, pause_reason FROM pairwise_tasks WHERE token = ?", [token])
    return dict(zip([d[0] for d in cursor.description], cursor.fetchone()))


def test_one_tab_holds_the_pair_a_second_takes_it_over(world):
    db, p = world["db"], world["people"]
    study_id = _create(world, practice=0)
    ann = p["ann1"]["id"]
    first = pws.current_task(db, study_id, ann, at=100.0, settings=SETTINGS, tab="tab-1")
    assert not first.held_elsewhere and first.token
    assert pws.heartbeat(db, ann, first.token, at=105.0, tab="tab-1", settings=SETTINGS)[0] == "active"
    # a second tab of the same person opens the page: it takes the pair over
    second = pws.current_task(db, study_id, ann, at=107.0, settings=SETTINGS, tab="tab-2")
    assert second.token == first.token and not second.held_elsewhere
    assert _clock(db, first.token)["takeovers"] == 1
    # the first tab learns so at its next heartbeat or input report; nothing of it is booked
    assert pws.heartbeat(db, ann, first.token, at=110.0, tab="tab-1", settings=SETTINGS)[0] == "elsewhere"
    before = _clock(db, first.token)
    assert pws.record_activity(db, ann, first.token, at=111.0, tab="tab-1", settings=SETTINGS)[0] == "elsewhere"
    assert _clock(db, first.token) == before
    # drawn again, the first tab (which showed the study before) does not take it back unasked
    held = pws.current_task(db, study_id, ann, at=112.0, settings=SETTINGS, tab="tab-1", take_over=False)
    assert held.held_elsewhere and held.token == ""  # the page gets no token: it shows no image
    with pytest.raises(TakenOverError, match="open in another tab"):
        pws.vote(db, ann, first.token, "left", at=113.0, settings=SETTINGS, tab="tab-1")
    assert db.execute("SELECT COUNT(*) FROM pairwise_votes").fetchone()[0] == 0
    # the clock counts one tab only: 100-107 in tab one, 107-115 in tab two
    assert pws.heartbeat(db, ann, first.token, at=115.0, tab="tab-2", settings=SETTINGS)[0] == "active"
    assert _clock(db, first.token)["active_seconds"] == pytest.approx(15.0)
    # "Continue here" in tab one: tab two is the one told now
    pws.take_over(db, study_id, ann, "tab-1", at=116.0, settings=SETTINGS)
    assert pws.heartbeat(db, ann, first.token, at=117.0, tab="tab-2", settings=SETTINGS)[0] == "elsewhere"
    pws.vote(db, ann, first.token, "left", at=120.0, settings=SETTINGS, tab="tab-1")
    row = db.execute("SELECT active_seconds, takeovers, wall_seconds FROM pairwise_votes").fetchone()
    assert row == (pytest.approx(20.0), 2, pytest.approx(20.0))
    assert pws.progress(db, study_id).set_index("annotator").loc["ann1", "take-overs"] == 2
    assert list(pws.votes_frame(db, study_id)["takeovers"]) == [2]
    # the next pair is the holding tab's
    nxt = pws.current_task(db, study_id, ann, at=121.0, settings=SETTINGS, tab="tab-1", take_over=False)
    assert not nxt.held_elsewhere and nxt.position == 2


def test_a_pause_hides_the_pair_in_every_tab_and_the_resuming_tab_holds_it(world):
    db, p = world["db"], world["people"]
    study_id = _create(world, practice=0)
    ann = p["ann1"]["id"]
    view = pws.current_task(db, study_id, ann, at=100.0, settings=SETTINGS, tab="tab-1")
    pws.current_task(db, study_id, ann, at=101.0, settings=SETTINGS, tab="tab-2")
    pws.pause(db, ann, view.token, at=102.0, settings=SETTINGS)
    assert pws.heartbeat(db, ann, view.token, at=103.0, tab="tab-1", settings=SETTINGS)[0] == "paused"
    paused = pws.current_task(db, study_id, ann, at=104.0, settings=SETTINGS, tab="tab-1", take_over=False)
    assert paused.paused and not paused.held_elsewhere and paused.pause_reason == "button"
    pws.resume(db, ann, view.token, at=110.0, tab="tab-1", settings=SETTINGS)
    assert pws.heartbeat(db, ann, view.token, at=111.0, tab="tab-2", settings=SETTINGS)[0] == "elsewhere"
    assert pws.heartbeat(db, ann, view.token, at=112.0, tab="tab-1", settings=SETTINGS)[0] == "active"
    assert _clock(db, view.token)["paused_seconds"] == pytest.approx(8.0)


def test_input_reports_keep_the_idle_pause_away_and_set_the_last_input(world):
    db, p = world["db"], world["people"]
    study_id = _create(world, practice=0)
    ann = p["ann1"]["id"]
    view = pws.current_task(db, study_id, ann, at=100.0, settings=SETTINGS, tab="t")
    for at in range(105, 150, 5):
        assert pws.heartbeat(db, ann, view.token, at=float(at), tab="t", settings=SETTINGS)[0] == "active"
    # input 3 s before a report at 150: the last input is 147, the idle limit (60 s) counts from there
    assert pws.record_activity(db, ann, view.token, at=150.0, tab="t", input_age=3.0, settings=SETTINGS)[0] == "active"
    assert _clock(db, view.token)["last_input_at"] == pytest.approx(147.0)
    for at in range(155, 210, 5):  # past the idle limit after showing (100 s), not after the input
        assert pws.heartbeat(db, ann, view.token, at=float(at), tab="t", settings=SETTINGS)[0] == "active"
    assert pws.heartbeat(db, ann, view.token, at=210.0, tab="t", settings=SETTINGS)[0] == "paused"  # 63 s without input
    got = _clock(db, view.token)
    assert got["pause_reason"] == "idle" and got["idle_pauses"] == 1
    assert got["idle_seconds"] == pytest.approx(63.0) and got["active_seconds"] == pytest.approx(47.0)
    assert pws.current_task(db, study_id, ann, at=211.0, settings=SETTINGS, tab="t").pause_reason == "idle"
    # a hidden tab's report is no input: the time since is away, the last input stays
    pws.resume(db, ann, view.token, at=300.0, tab="t", settings=SETTINGS)
    assert pws.record_activity(db, ann, view.token, at=303.0, tab="t", visible=False, settings=SETTINGS)[0] == "hidden"
    assert pws.heartbeat(db, ann, view.token, at=320.0, tab="t", visible=False, settings=SETTINGS)[0] == "hidden"
    got = _clock(db, view.token)
    assert got["last_input_at"] == pytest.approx(300.0) and got["away_seconds"] == pytest.approx(17.0)
    pws.vote(db, ann, view.token, "tie", at=321.0, settings=SETTINGS, tab="t")
    assert list(pws.votes_frame(db, study_id)["idle_pauses"]) == [1]
    assert pws.progress(db, study_id).set_index("annotator").loc["ann1", "idle pauses"] == 1


# ---------------------------------------------------------------- the lead's actions, each audited

def test_lead_actions_are_audited_and_archive_and_removal_stop_votes(world):
    from structext_core.studio import accounts

    db, p = world["db"], world["people"]
    lead = p["lead"]["id"]
    study_id = _create(world, n_pairs=4, practice=0)
    view = pws.current_task(db, study_id, p["ann1"]["id"], at=100.0, settings=SETTINGS)
    pws.vote(db, p["ann1"]["id"], view.token, "left", at=104.0, settings=SETTINGS)
    # open / close
    pws.set_status(db, study_id, "closed", by_user=lead)
    with pytest.raises(StudyError, match="closed already"):
        pws.set_status(db, study_id, "closed", by_user=lead)
    with pytest.raises(StudyError, match="closed by the study lead"):
        pws.current_task(db, study_id, p["ann2"]["id"], settings=SETTINGS)
    pws.set_status(db, study_id, "open", by_user=lead)
    # archive: hidden from annotators, no votes taken; back again
    pws.set_archived(db, study_id, True, by_user=lead)
    assert pws.studies_for_annotator(db, p["ann1"]["id"]) == []
    assert pws.list_studies(db, include_archived=False) == [] and pws.get_study(db, study_id).archived
    with pytest.raises(StudyError, match="archived"):
        pws.current_task(db, study_id, p["ann1"]["id"], settings=SETTINGS)
    with pytest.raises(StudyError, match="archived already"):
        pws.set_archived(db, study_id, True, by_user=lead)
    pws.set_archived(db, study_id, False, by_user=lead)
    # a new annotator: the same pairs, in their own order
    ann3 = accounts.create_user(db, "ann3", "password1", "annotator")
    pws.add_annotator(db, study_id, ann3["id"], by_user=lead)
    with pytest.raises(StudyError, match="already takes part"):
        pws.add_annotator(db, study_id, ann3["id"], by_user=lead)
    # taken off: no longer sees or votes; the vote given is kept
    nxt = pws.current_task(db, study_id, p["ann1"]["id"], at=110.0, settings=SETTINGS)
    assert pws.remove_annotator(db, study_id, p["ann1"]["id"], by_user=lead) == 1
    with pytest.raises(StudyError, match="taken you off"):
        pws.vote(db, p["ann1"]["id"], nxt.token, "left", at=112.0, settings=SETTINGS)
    with pytest.raises(StudyError, match="taken you off"):
        pws.current_task(db, study_id, p["ann1"]["id"], settings=SETTINGS)
    assert [s[0] for s in pws.studies_for_annotator(db, p["ann1"]["id"])] == []
    with pytest.raises(StudyError, match="cannot join it again"):
        pws.add_annotator(db, study_id, p["ann1"]["id"], by_user=lead)
    with pytest.raises(StudyError, match="already"):
        pws.remove_annotator(db, study_id, p["ann1"]["id"], by_user=lead)
    assert len(pws.votes_frame(db, study_id)) == 1
    assert pws.progress(db, study_id).set_index("annotator")["taken off"].to_dict() == {
        "ann1": True, "ann2": False, "ann3": False}
    # a flag and its resolution
    other = pws.current_task(db, study_id, p["ann2"]["id"], settings=SETTINGS)
    flag = pws.flag_pair(db, p["ann2"]["id"], other.token, "broken")
    with pytest.raises(StudyError, match="study lead"):
        pws.resolve_flag(db, flag, p["ann2"], "fine")
    pws.resolve_flag(db, flag, p["lead"], "image replaced")
    with pytest.raises(StudyError, match="resolved already"):
        pws.resolve_flag(db, flag, p["lead"], "again")
    got = [(c.action, c.by, c.detail) for c in reversed(pws.history(db, study_id))]
    assert [a for a, _, _ in got] == [
        "pairwise.create", "pairwise.close", "pairwise.open", "pairwise.archive", "pairwise.unarchive",
        "pairwise.add_annotator", "pairwise.remove_annotator", "pairwise.resolve_flag"]
    assert {by for _, by, _ in got} == {"lead"}
    assert got[0][2]["pairs"] == 4 and got[0][2]["annotators"] == [p["ann1"]["id"], p["ann2"]["id"]]
    assert got[5][2] == {"user_id": ann3["id"]} and got[6][2] == {"user_id": p["ann1"]["id"], "votes_kept": 1}
    assert got[7][2] == {"flag": flag, "resolution": "image replaced"}
