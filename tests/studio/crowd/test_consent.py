"""A study's consent text: versions, acceptance and refusal, who is asked again, and the gate before
the rule and the first question (the study's functions refuse, whatever the page asks)."""

import pytest

from structext_core.studio import study
from structext_core.studio.crowd import consent, outcomes
from structext_core.studio.crowd.consent import ConsentError
from tests.studio.crowd.consent_support import small_study


@pytest.fixture
def with_consent(db, annotators, admin):
    study_id = small_study(db, annotators)
    version = consent.set_consent(db, study_id, "# Consent\n\nYou agree to **answer honestly**.", by=admin["id"])
    return study_id, version


def test_versions_are_kept_and_the_same_text_makes_none(db, annotators, admin):
    study_id = small_study(db, annotators)
    assert consent.current_consent(db, study_id) is None
    assert consent.set_consent(db, study_id, "First text.", by=admin["id"]) == 1
    assert consent.set_consent(db, study_id, "  First text.\r\n", by=admin["id"]) == 1  # unchanged: no new version
    assert consent.set_consent(db, study_id, "Second text.", by=admin["id"]) == 2
    current = consent.current_consent(db, study_id)
    assert (current.version, current.text) == (2, "Second text.")
    assert [(c.version, c.text) for c in consent.versions(db, study_id)] == [(2, "Second text."), (1, "First text.")]
    assert db.execute("SELECT consent_version FROM study_crowd WHERE study_id = ?", [study_id]).fetchone()[0] == 2


@pytest.mark.parametrize("text, message", [
    ("   \n ", "The consent text is empty"),
    ("x" * (consent.MAX_CONSENT_CHARS + 1), "the limit is 20,000 characters"),
    ("Fine text\x00 with a NUL", "control character"),
    ("Fine text\x1b[31m with an escape", "control character"),
    (None, "must be text"),
])
def test_a_consent_text_that_cannot_be_kept_is_refused_and_nothing_is_written(db, annotators, admin, text, message):
    study_id = small_study(db, annotators)
    with pytest.raises(ConsentError, match=message):
        consent.set_consent(db, study_id, text, by=admin["id"])
    assert consent.current_consent(db, study_id) is None
    assert db.execute("SELECT COUNT(*) FROM consent_texts").fetchone()[0] == 0


def test_a_consent_text_of_the_limit_is_kept_and_html_is_kept_as_text(db, annotators, admin):
    study_id = small_study(db, annotators)
    text = "<script>alert(1)</script>" + "x" * (consent.MAX_CONSENT_CHARS - 25)
    consent.set_consent(db, study_id, text, by=admin["id"])
    assert consent.current_consent(db, study_id).text == text  # rendered safely by the page, kept as written


def test_no_study_no_consent(db, admin):
    with pytest.raises(ConsentError, match="There is no study with id 999"):
        consent.set_consent(db, 999, "Text.", by=admin["id"])


def test_accepting_records_the_version_and_the_time(db, annotators, with_consent):
    study_id, version = with_consent
    ann = annotators[0]["id"]
    assert consent.needs_consent(db, study_id, ann)
    consent.accept(db, study_id, ann, version)
    consent.accept(db, study_id, ann, version)  # twice: nothing more
    row = db.execute("SELECT consent_version, consent_at FROM study_annotators WHERE study_id = ? AND user_id = ?",
                     [study_id, ann]).fetchone()
    assert row[0] == version and row[1] > 0
    assert not consent.needs_consent(db, study_id, ann)
    assert consent.needs_consent(db, study_id, annotators[1]["id"])  # only that person


def test_a_study_without_consent_asks_nobody(db, annotators):
    study_id = small_study(db, annotators)
    assert not consent.needs_consent(db, study_id, annotators[0]["id"])
    with pytest.raises(ConsentError, match="asks for no consent"):
        consent.accept(db, study_id, annotators[0]["id"], 1)


def test_accepting_a_version_not_in_force_is_refused(db, annotators, admin, with_consent):
    study_id, version = with_consent
    consent.set_consent(db, study_id, "A new text.", by=admin["id"])
    with pytest.raises(ConsentError, match="has changed since it was shown"):
        consent.accept(db, study_id, annotators[0]["id"], version)
    assert consent.needs_consent(db, study_id, annotators[0]["id"])


def test_someone_not_in_the_study_cannot_accept_or_decline(db, annotators, admin, with_consent):
    study_id, version = with_consent
    with pytest.raises(ConsentError, match="You do not take part"):
        consent.accept(db, study_id, admin["id"], version)
    with pytest.raises(ConsentError, match="You do not take part"):
        consent.decline(db, study_id, admin["id"])
    assert not consent.needs_consent(db, study_id, admin["id"])


def test_someone_taken_off_cannot_accept(db, annotators, admin, with_consent):
    study_id, version = with_consent
    study.remove_annotator(db, study_id, annotators[0]["id"], by_user=admin["id"])
    with pytest.raises(ConsentError, match="taken you off"):
        consent.accept(db, study_id, annotators[0]["id"], version)


def test_declining_records_the_outcome_and_ends_the_visit(db, annotators, with_consent):
    study_id, version = with_consent
    ann = annotators[0]["id"]
    consent.decline(db, study_id, ann)
    row = db.execute("SELECT declined_at, outcome, outcome_at, consent_version FROM study_annotators"
                     " WHERE study_id = ? AND user_id = ?", [study_id, ann]).fetchone()
    assert row[0] > 0 and row[1] == "declined" and row[2] > 0 and row[3] is None
    with pytest.raises(ConsentError, match="You declined"):
        consent.accept(db, study_id, ann, version)
    with pytest.raises(ConsentError, match="You declined"):
        consent.decline(db, study_id, ann)
    end = outcomes.end_state(db, study_id, ann)
    assert (end.outcome, end.reason) == ("declined", "declined")
    with pytest.raises(study.StudyError, match="You declined"):
        study.accept_rule(db, study_id, ann)


def test_declining_after_accepting_and_starting_is_refused(db, annotators, with_consent):
    study_id, version = with_consent
    ann = annotators[0]["id"]
    consent.accept(db, study_id, ann, version)
    with pytest.raises(ConsentError, match="no consent to decline"):
        consent.decline(db, study_id, ann)


def test_a_new_version_asks_again_only_people_who_have_not_started(db, annotators, admin, with_consent):
    study_id, version = with_consent
    started, waiting = annotators[0]["id"], annotators[1]["id"]
    for person in (started, waiting):
        consent.accept(db, study_id, person, version)
        study.accept_rule(db, study_id, person)
    study.open_question(db, study_id, started)  # a question opened: they are answering
    new = consent.set_consent(db, study_id, "The text, changed.", by=admin["id"])
    assert not consent.needs_consent(db, study_id, started)  # keeps the version they accepted
    assert consent.needs_consent(db, study_id, waiting)
    assert study.open_question(db, study_id, started) is not None
    with pytest.raises(study.StudyError, match="accept the study's consent text"):
        study.open_question(db, study_id, waiting)
    consent.accept(db, study_id, waiting, new)
    assert study.open_question(db, study_id, waiting) is not None
    versions = dict(db.execute("SELECT user_id, consent_version FROM study_annotators WHERE study_id = ?",
                               [study_id]).fetchall())
    assert (versions[started], versions[waiting]) == (version, new)


def test_no_rule_and_no_question_before_consent(db, annotators, with_consent):
    """A crafted rerun (the rule's button, a question asked for) cannot pass the gate: nothing
    starts a clock before consent."""
    study_id, version = with_consent
    ann = annotators[0]["id"]
    with pytest.raises(study.StudyError, match="consent"):
        study.accept_rule(db, study_id, ann)
    with pytest.raises(study.StudyError, match="consent"):
        study.open_question(db, study_id, ann)
    with pytest.raises(study.StudyError, match="consent"):
        study.take_over(db, study_id, ann, "tab-1")
    shown = db.execute("SELECT COUNT(*) FROM assignments WHERE user_id = ? AND first_shown_at IS NOT NULL",
                       [ann]).fetchone()[0]
    rule = db.execute("SELECT rule_accepted_at FROM study_annotators WHERE user_id = ? AND study_id = ?",
                      [ann, study_id]).fetchone()[0]
    assert shown == 0 and rule is None
    consent.accept(db, study_id, ann, version)
    study.accept_rule(db, study_id, ann)
    assert study.open_question(db, study_id, ann) is not None


def test_consent_added_after_the_rule_still_comes_before_the_first_question(db, annotators, admin):
    study_id = small_study(db, annotators)
    ann = annotators[0]["id"]
    study.accept_rule(db, study_id, ann)
    consent.set_consent(db, study_id, "Consent, added late.", by=admin["id"])
    with pytest.raises(study.StudyError, match="consent"):
        study.open_question(db, study_id, ann)


def test_a_copy_of_the_study_takes_its_crowd_settings_and_its_consent_as_version_one(db, annotators, admin):
    """Copying a pilot for the main run keeps what people are asked and told (Studies says "the same
    settings"): the consent text in force, the questionnaire, codes, addresses, budget, bonus, dealing."""
    from structext_core.studio.crowd import questionnaire, settings

    study_id = small_study(db, annotators)
    consent.set_consent(db, study_id, "Old text.", by=admin["id"])
    consent.set_consent(db, study_id, "Text in force.", by=admin["id"])
    fields = questionnaire.set_questionnaire(db, study_id, [{"name": "years", "label": "Years", "kind": "number",
                                                             "min": 0, "max": 60}], by=admin["id"])
    chosen = {"completion_code": "C0DE", "completion_url": "https://platform.example/done", "screenout_code": "SCR",
              "time_budget_seconds": 900.0, "bonus_per_correct": 0.1, "bonus_cap": 2.0, "currency": "USD",
              "per_item": 3, "hold_seconds": 600.0}
    settings.save_settings(db, study_id, admin["id"], **chosen)
    copy = study.clone_study(db, study_id, name="main run", by_user=admin["id"])
    copied = settings.crowd_settings(db, copy)
    assert {name: getattr(copied, name) for name in chosen} == chosen
    assert list(copied.questionnaire) == fields
    assert [(c.version, c.text) for c in consent.versions(db, copy)] == [(1, "Text in force.")]
    # The copy's settings are its own: changing them leaves the source as it was.
    settings.save_settings(db, copy, admin["id"], completion_code="NEW")
    assert settings.crowd_settings(db, study_id).completion_code == "C0DE"
    # A study without crowd settings gives its copy none.
    plain = study.clone_study(db, small_study(db, annotators, name="no crowd"), name="plain copy", by_user=admin["id"])
    assert settings.crowd_settings(db, plain) == settings.CrowdSettings(study_id=plain)
