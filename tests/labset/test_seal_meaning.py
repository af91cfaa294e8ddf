"""Issue 44, item 5: the lab's own benchmark is sealed by meaning, not by bytes. A near copy of a set
(options in reverse order, white space added, the case changed, NFD for NFC, its images encoded again
and resized) asks the same questions: a person with the original open in one study is shown no key
of the copy (practice or correctness), and someone shown the copy's keys as practice is refused by a
study of the original and left out of a new one's draw. A genuinely different question is not
sealed. Each attack passed the seal before (the content hash differs for every copy)."""
from __future__ import annotations

import io
import json
import unicodedata

import pytest
from PIL import Image, ImageDraw

from structext_core.evaluation.choices import LETTERS
from structext_core.labset import images as lab_images
from structext_core.labset import seal as lab_seal
from structext_core.labset.study import create_study, load_for_study

QUESTIONS = [
    ("Quelle ville est la capitale de la Côte d'Ivoire ?", ["Yamoussoukro", "Abidjan", "Bouaké", "San-Pédro"], "A"),
    ("Which café in the picture serves crème brûlée?", ["Le Procope", "Café de Flore", "Les Deux Magots"], "C"),
    ("Welche Straße im Bild ist die längste?", ["Königsallee", "Kurfürstendamm", "Schloßstraße", "Zeil"], "B"),
    ("Name the naïve résumé's author shown here.", None, ["Zoë Brontë", "Zoe Bronte"]),
]


def picture(n: int, flip: bool = False) -> Image.Image:
    """A picture with large features (a gradient, a disc, a bar), the ``n``th of the set."""
    img = Image.new("RGB", (240, 180))
    draw = ImageDraw.Draw(img)
    for x in range(240):
        draw.line([(x, 0), (x, 179)], fill=(x, (x * 3 + n * 50) % 256, 200 - x // 2))
    draw.ellipse([30 + n * 20, 40, 120 + n * 20, 140], fill=(250, 250, 30 * n))
    draw.rectangle([150, 20 + n * 10, 220, 90 + n * 10], fill=(10, 40 * n, 90))
    return img.transpose(Image.FLIP_LEFT_RIGHT) if flip else img


def encoded(img: Image.Image, kind: str) -> bytes:
    out = io.BytesIO()
    if kind == "original":
        img.save(out, "PNG", compress_level=9)
    elif kind == "png":  # saved again with other compression, and resized to 90%
        img.resize((216, 162), Image.LANCZOS).save(out, "PNG", compress_level=1)
    else:  # a JPEG at quality 95, resized to 90%
        img.resize((216, 162), Image.LANCZOS).save(out, "JPEG", quality=95)
    return out.getvalue()


def write(folder, change: str = "original"):
    """The set (four questions, each on an image) written to ``folder`` as ``change`` makes it."""
    folder.mkdir()
    (folder / "images").mkdir()
    records = []
    for n, (question, choices, target) in enumerate(QUESTIONS):
        suffix = "jpg" if change == "jpeg" else "png"
        flip = change == "other-image" and n == 0
        (folder / "images" / f"p{n}.{suffix}").write_bytes(
            encoded(picture(n, flip), change if change in ("png", "jpeg") else "original"))
        choices, target = (list(choices) if choices else None), target
        if change == "reversed" and choices:
            target = LETTERS[len(choices) - 1 - LETTERS.index(target)]
            choices.reverse()
        text = {"spaces": lambda t: " ".join(t.split(" ")).replace(" ", "  ") + " \t",
                "case": str.upper, "nfd": lambda t: unicodedata.normalize("NFD", t)}.get(change, lambda t: t)
        question = text(question)
        if choices:
            choices = [text(c) for c in choices]
        else:
            target = [text(t) for t in target]
        if change == "other-text" and n == 0:
            question = question.replace("capitale", "plus grande ville")
        if change == "other-options" and n == 0:
            choices[-1] = "Korhogo"
        record = {"id": f"{change}-{n}", "input": question, "target": target, "image": f"images/p{n}.{suffix}"}
        if choices:
            record["choices"] = choices
        records.append(record)
    path = folder / "set.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return load_for_study(path)


NEAR_COPIES = ["reversed", "spaces", "case", "nfd", "png", "jpeg"]
DIFFERENT = ["other-text", "other-options", "other-image"]


@pytest.fixture
def world(install_member, tmp_path, monkeypatch):
    from structext_core.studio import accounts, storage
    install_member("structext_labset", "labset", "structext_core.labset.member")
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    people = {name: accounts.create_user(db, name, "password1", role)
              for name, role in (("lead", "admin"), ("ann", "annotator"), ("ann2", "annotator"))}
    return db, people, write(tmp_path / "original")


def _answer_all(db, study_id, user_id) -> dict[int, str]:
    """Every question of the study answered (wrongly: "A"); {response id: its item's kind}."""
    from structext_core.studio import study
    study.accept_rule(db, study_id, user_id)
    done = {}
    while (view := study.open_question(db, study_id, user_id)) is not None:
        response = study.submit_answer(db, user_id, view.assignment_id, "A").response_id
        done[response] = db.execute("SELECT kind FROM study_items WHERE id = ?", [view.item_id]).fetchone()[0]
    return done


def _sample_ids(db, study_id, kind=None) -> set[str]:
    return {row[0] for row in db.execute("SELECT sample_id FROM study_items WHERE study_id = ?"
                                         + (" AND kind = ?" if kind else ""), [study_id, *([kind] if kind else [])])}


@pytest.mark.parametrize("change", NEAR_COPIES)
def test_a_near_copy_means_the_same_questions(world, tmp_path, change):
    _, _, original = world
    copy = write(tmp_path / change, change)
    changed = [n for n, (mine, theirs) in enumerate(zip(original, copy)) if mine["id"] != theirs["id"]]
    assert changed == ([0, 1, 2] if change == "reversed" else [0, 1, 2, 3])  # other bytes: other content ids
    for mine, theirs in zip(original, copy):
        assert lab_seal.meaning_key(mine).same(lab_seal.meaning_key(theirs))
        assert mine["image_phash"] and theirs["image_phash"]


@pytest.mark.parametrize("change", DIFFERENT)
def test_a_different_question_does_not(world, tmp_path, change):
    _, _, original = world
    other = write(tmp_path / change, change)
    assert not lab_seal.meaning_key(original[0]).same(lab_seal.meaning_key(other[0]))
    assert all(lab_seal.meaning_key(a).same(lab_seal.meaning_key(b)) for a, b in zip(original[1:], other[1:]))


@pytest.mark.parametrize("change", NEAR_COPIES)
def test_no_key_of_a_near_copy_is_shown_while_the_original_is_open(world, tmp_path, change):
    from structext_core.studio import study
    db, people, original = world
    ann = people["ann"]["id"]
    create_study(db, name="A", source="set.jsonl", items=original, n_items=4, annotator_ids=[ann], rule_text="r")
    copy = write(tmp_path / change, change)
    b, _ = create_study(db, name="B", source="copy.jsonl", items=copy, n_items=1, practice_items=3,
                        show_correctness=True, annotator_ids=[ann], rule_text="r")
    done = _answer_all(db, b, ann)
    assert sorted(done.values()) == ["practice", "practice", "practice", "study"]
    for response, kind in done.items():
        if kind == "practice":  # (1) practice over the copy: no key
            feedback = study.practice_feedback(db, ann, response)
            assert feedback.key_withheld and feedback.answer == ""
        else:  # (2) correctness in a study over the copy: withheld
            assert study.response_feedback(db, ann, response).withheld


@pytest.mark.parametrize("change", NEAR_COPIES)
def test_keys_seen_on_a_near_copy_keep_one_out_of_the_original(world, tmp_path, change):
    from structext_core.studio import study
    db, people, original = world
    ann, ann2 = people["ann"]["id"], people["ann2"]["id"]
    a, _ = create_study(db, name="A", source="set.jsonl", items=original, n_items=4, annotator_ids=[ann],
                        rule_text="r")
    copy = write(tmp_path / change, change)
    c, _ = create_study(db, name="C", source="copy.jsonl", items=copy, n_items=1, practice_items=3,
                        annotator_ids=[ann2], rule_text="r")
    for response, kind in _answer_all(db, c, ann2).items():
        if kind == "practice":  # nothing of ann2's is open elsewhere: the copy's keys are shown
            assert study.practice_feedback(db, ann2, response).answer
    # (3) refused by a study holding the originals, nothing written
    before = db.execute("SELECT COUNT(*) FROM assignments").fetchone()[0]
    with pytest.raises(study.StudyError, match="'ann2' has already seen answers of this study: they answered 3"):
        study.add_annotator(db, a, ann2)
    assert db.execute("SELECT COUNT(*) FROM assignments").fetchone()[0] == before
    # ... and a new study's draw leaves the originals of the practised questions out
    by_copy = {item["id"]: n for n, item in enumerate(copy)}
    practised = {original[by_copy[sid]]["id"] for sid in _sample_ids(db, c, "practice")}
    d, note = create_study(db, name="D", source="set.jsonl", items=original, n_items=1, annotator_ids=[ann2],
                           rule_text="r")
    assert _sample_ids(db, d) and not _sample_ids(db, d) & practised and "Left out of the draw: 3" in note
    with pytest.raises(study.StudyError):
        create_study(db, name="E", source="set.jsonl", items=original, n_items=2, annotator_ids=[ann2], rule_text="r")


@pytest.mark.parametrize("change", DIFFERENT)
def test_a_different_question_is_not_sealed(world, tmp_path, change):
    from structext_core.studio import study
    db, people, original = world
    ann, ann2 = people["ann"]["id"], people["ann2"]["id"]
    a, _ = create_study(db, name="A", source="set.jsonl", items=original, n_items=4, annotator_ids=[ann],
                        rule_text="r")
    other = write(tmp_path / change, change)
    b, _ = create_study(db, name="B", source="other.jsonl", items=[other[0]], n_items=1,
                        show_correctness=True, annotator_ids=[ann, ann2], rule_text="r")
    (response, _), = _answer_all(db, b, ann).items()
    assert not study.response_feedback(db, ann, response).withheld  # its one question is another question
    assert not lab_seal.is_open_for(db, ann, other[0]) and lab_seal.is_open_for(db, ann, original[0])
    # shown its key as practice, ann2 may still join a study of the original, whose draw keeps it
    p, _ = create_study(db, name="P", source="other.jsonl", items=other, n_items=1, practice_items=3,
                        annotator_ids=[ann2], rule_text="r")
    db.execute("UPDATE study_items SET kind = 'practice' WHERE study_id = ?", [p])  # every one practice
    db.conn.commit()
    _answer_all(db, p, ann2)
    seen = lab_seal.seen_keys(db, [ann2])
    assert not seen.covers(original[0]) and seen.covers(original[1])  # the others are the same questions
    d, _ = create_study(db, name="D", source="set.jsonl", items=original[:1], n_items=1, annotator_ids=[ann2],
                        rule_text="r")
    assert _sample_ids(db, d) == {original[0]["id"]}
    e, _ = create_study(db, name="E", source="set.jsonl", items=original[:1], n_items=1, annotator_ids=[ann],
                        rule_text="r")
    study.add_annotator(db, e, ann2)  # not refused
    assert a and ann2 in {row[0] for row in db.execute("SELECT user_id FROM study_annotators WHERE study_id = ?", [e])}


def test_the_study_keeps_the_perceptual_hash_and_the_hash_survives_encodings(world):
    db, people, original = world
    study_id, _ = create_study(db, name="A", source="set.jsonl", items=original, n_items=4,
                               annotator_ids=[people["ann"]["id"]], rule_text="r")
    kept = [json.loads(row[0])["kept"] for row in db.execute(
        "SELECT sample_json FROM study_items WHERE study_id = ?", [study_id])]
    assert all(len(k["image_phash"]) == 16 for k in kept)
    for n in range(4):
        hashes = {kind: lab_images.decode_check(encoded(picture(n), kind))["phash"] for kind in ("original", "png", "jpeg")}
        assert lab_images.same_picture(hashes["original"], hashes["png"])
        assert lab_images.same_picture(hashes["original"], hashes["jpeg"])
        assert not lab_images.same_picture(hashes["original"], lab_images.dhash(picture(n, flip=True)))
    assert not lab_images.same_picture("0" * 16, "f" * 16) and not lab_images.same_picture(None, "0" * 16)
    assert not lab_images.same_picture("0" * 10_000, "0" * 10_000)  # no long number is read


def test_meaning_is_read_in_linear_time_from_hostile_text():
    long = "a " * 100_000 + "\u00e9" * 50_000
    meaning = lab_seal.meaning_key({"question": long, "options": ["x", "y"], "answer": "Z" * 1000})
    assert meaning is not None and meaning.key is None  # no such letter: a key unknown matches any
    assert lab_seal.meaning_key({"sample_json": "{not json"}) is None
    assert lab_seal.meaning_key({"question": "  \t "}) is None
