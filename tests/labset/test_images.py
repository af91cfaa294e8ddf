"""Questions on an image in a study of a lab's set: the image served blinded (pixels only, re-encoded in
a sandbox worker), checked again at each serving (a file changed since the draw, a link out of the
folder, a file that does not decode: refused with a message, never shown), and on the question page."""
from __future__ import annotations

import struct
import zlib

import pytest

from structext_core.labset.dataset import load_set
from structext_core.labset.study import create_study
from tests.labset.conftest import png, samples, write_set
from tests.pages.answer_boxes import answer_box, answer_boxes
from tests.pages.light_parts import notes


def chunks(data: bytes) -> list[bytes]:
    """The chunk types of a PNG, in order."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, at = [], 8
    while at < len(data):
        length = struct.unpack(">I", data[at:at + 4])[0]
        out.append(data[at + 4:at + 8])
        at += 12 + length
    return out


@pytest.fixture
def image_study(tmp_path, monkeypatch):
    """A study of the set's 10 questions on an image (the set in the sets folder), for ann1; the
    folder, the db, ann1 and the lead."""
    from structext_core.studio import accounts, storage
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    lead = accounts.create_user(db, "lead", "password1", "admin")
    ann = accounts.create_user(db, "ann1", "password1", "annotator")
    folder = tmp_path / "suites" / "labsets"
    folder.mkdir(parents=True)
    records = samples()
    # a text chunk naming the answer, which the served image must not carry
    text = b"tEXtComment\x00the answer is A"
    records_png = png(6, 3)
    marked = records_png[:-12] + struct.pack(">I", len(text) - 4) + text + \
        struct.pack(">I", zlib.crc32(text) & 0xFFFFFFFF) + records_png[-12:]
    write_set(folder, records)
    (folder / "images" / "q0.png").write_bytes(marked)
    items = [i for i in load_set(folder / "set.jsonl") if i["image"]]
    study_id, note = create_study(db, items=items, name="on-images", source="set.jsonl", n_items=10,
                                  annotator_ids=[ann["id"]], rule_text="No help.")
    assert note == ""
    return {"db": db, "folder": folder, "ann": ann, "lead": lead, "study": study_id}


def _assignment_of(db, study_id, user_id, image):
    return db.execute("SELECT a.id, i.id FROM assignments a JOIN study_items i ON i.id = a.item_id WHERE a.study_id = ?"
                      " AND a.user_id = ? AND json_extract(i.sample_json, '$.image') = ?",
                      [study_id, user_id, image]).fetchone()


def test_the_image_is_served_blinded_to_its_annotator_and_the_lead(image_study):
    import io

    from PIL import Image

    from structext_core.studio import study
    db, ann = image_study["db"], image_study["ann"]
    assignment, item = _assignment_of(db, image_study["study"], ann["id"], "images/q0.png")
    served = study.item_image(db, ann["id"], assignment, b"nonce")
    assert chunks(served) == [b"IHDR", b"IDAT", b"IEND"]  # pixels only: the text chunk is gone
    assert b"answer" not in served and b"q0" not in served and b"images/" not in served
    assert Image.open(io.BytesIO(served)).size == (6, 3)
    assert chunks(study.lead_image(db, item)) == [b"IHDR", b"IDAT", b"IEND"]
    with pytest.raises(study.StudyError, match="not one of yours"):
        study.item_image(db, image_study["lead"]["id"], assignment)


@pytest.mark.parametrize("change", ["replaced", "link_out", "gone", "undecodable"])
def test_an_image_changed_since_the_draw_is_refused_and_never_shown(image_study, tmp_path, change):
    from structext_core.studio import study
    db, ann, folder = image_study["db"], image_study["ann"], image_study["folder"]
    assignment, _ = _assignment_of(db, image_study["study"], ann["id"], "images/q3.png")
    target = folder / "images" / "q3.png"
    if change == "replaced":
        target.write_bytes(png(7, 3, 250))
    elif change == "link_out":
        outside = tmp_path / "outside.png"
        outside.write_bytes(target.read_bytes())  # the same bytes, but out of the set's folder
        target.unlink()
        target.symlink_to(outside)
    elif change == "gone":
        target.unlink()
    with pytest.raises(study.StudyError) as error:
        if change == "undecodable":  # a set whose image's header is sound and its data is not
            broken = png(5, 3)
            idat = broken.index(b"IDAT")
            broken = broken[:idat + 4] + b"\x00" * (len(broken) - idat - 16) + broken[-12:]
            target.write_bytes(broken)
            items = [i for i in load_set(folder / "set.jsonl") if i["image"] == "images/q3.png"]
            other = create_study(db, items=items, name="broken", source="set.jsonl", n_items=1,
                                 annotator_ids=[ann["id"]], rule_text="No help.")[0]
            assignment, _ = _assignment_of(db, other, ann["id"], "images/q3.png")
        study.item_image(db, ann["id"], assignment)
    said = str(error.value)
    expected = {"replaced": "changed since the study was drawn", "link_out": "no longer a readable image",
                "gone": "no longer a readable image", "undecodable": "does not decode"}[change]
    assert expected in said and "q3" not in said and "tell the study lead" in said


def test_the_question_page_shows_the_image(image_study):
    from tests.pages.test_page_access import run_page
    at = run_page("human_baseline", image_study["ann"])
    next(b for b in at.button if b.label.startswith("I have read the rule")).click().run()
    assert not at.exception and len(at.get("image")) == 1 and not at.error
    assert any(b.label.startswith("**A**") for b in at.button)



def test_a_short_answer_on_an_image_shows_it_beside_the_answer_box(tmp_path, monkeypatch):
    """Regression: the short-answer screen drew an empty reference panel and never the image."""
    from structext_core.studio import accounts, storage
    from tests.pages.test_page_access import run_page
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    ann = accounts.create_user(db, "ann1", "password1", "annotator")
    folder = tmp_path / "suites" / "labsets"
    folder.mkdir(parents=True)
    short = {"id": "s-img", "target": "grey", "input": [{"role": "user", "content": [
        {"type": "text", "text": "Which colour is this?"}, {"type": "image", "image": "images/q3.png"}]}]}
    write_set(folder, [short])
    create_study(db, items=load_set(folder / "set.jsonl"), name="short-image", source="set.jsonl", n_items=1,
                 annotator_ids=[ann["id"]], rule_text="No help.")
    at = run_page("human_baseline", ann)
    next(b for b in at.button if b.label.startswith("I have read the rule")).click().run()
    assert not at.exception and not at.error and len(at.get("image")) == 1 and len(answer_boxes(at)) == 1
    assert answer_box(at).buttons == ["Submit answer", "Pause", "Give up"]  # no "Add lines"
    assert not any("**Reference**" in m.value for m in [*at.markdown, *notes(at, "markdown")])


def test_the_inspect_log_carries_each_questions_image_as_drawn(image_study, tmp_path):
    import base64

    from inspect_ai.analysis import samples_df
    from inspect_ai.log import read_eval_log, resolve_sample_attachments
    from inspect_ai.model import ContentImage

    from structext_core.studio import study
    db, ann, folder = image_study["db"], image_study["ann"], image_study["folder"]
    study.accept_rule(db, image_study["study"], ann["id"])
    while (view := study.open_question(db, image_study["study"], ann["id"])) is not None:
        study.submit_answer(db, ann["id"], view.assignment_id, "A")
    (folder / "images" / "q3.png").write_bytes(png(7, 3, 250))  # changed since the draw: left out of the log
    path = study.write_inspect_log(db, image_study["study"], tmp_path / "human.eval")
    samples = {s.id: resolve_sample_attachments(s) for s in read_eval_log(str(path)).samples}
    assert len(samples) == 10
    for n in range(10):
        sample = samples[f"mc{40 + n}"]
        if n == 3:
            assert isinstance(sample.input, str)  # the question's text only
            continue
        image = next(c for c in sample.input[0].content if isinstance(c, ContentImage)).image
        assert image.startswith("data:image/png;base64,")
        assert base64.b64decode(image.split(",", 1)[1]) == (folder / "images" / f"q{n}.png").read_bytes()
    df = samples_df(str(path), quiet=True)
    assert len(df) == 10 and df["score_choice"].notna().all()  # the name of Inspect's choice(), as a model's task has it
