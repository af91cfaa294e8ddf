"""The lead's questionnaire (fields checked, kept as a JSON list) and a person's answers (checked,
kept as text once, after consent and before the rule and the first question)."""

import json

import pytest

from structext_core.studio import study
from structext_core.studio.crowd import consent, questionnaire
from structext_core.studio.crowd.questionnaire import QuestionnaireError
from tests.studio.crowd.consent_support import (
    EXPERTISE,
    FIELD,
    YEARS,
    small_study,
)


@pytest.fixture
def asked(db, annotators, admin):
    """A study with a three-field questionnaire and no consent text."""
    study_id = small_study(db, annotators)
    questionnaire.set_questionnaire(db, study_id, [EXPERTISE, YEARS, FIELD], by=admin["id"])
    return study_id


def test_fields_are_kept_in_order_and_trimmed(db, annotators, admin):
    study_id = small_study(db, annotators)
    kept = questionnaire.set_questionnaire(
        db, study_id, [{**EXPERTISE, "label": "  How expert are you?  "}, {**YEARS, "min": "0", "max": 60.0}, FIELD],
        by=admin["id"])
    assert kept == questionnaire.questionnaire(db, study_id)
    assert [f["name"] for f in kept] == ["expertise", "years", "field"]
    assert kept[0]["label"] == "How expert are you?" and kept[1]["min"] == 0 and kept[1]["max"] == 60
    assert kept[2] == {"name": "field", "label": "Your field of study", "kind": "text", "required": False}
    stored = db.execute("SELECT questionnaire FROM study_crowd WHERE study_id = ?", [study_id]).fetchone()[0]
    assert json.loads(stored) == kept


def test_the_lead_adds_and_removes_fields(db, annotators, admin):
    study_id = small_study(db, annotators)
    field = questionnaire.make_field("expertise", "How expert are you?", "choice",
                                     options="novice\n\n  some \nexpert\n", required=True)
    assert field["options"] == ["novice", "some", "expert"]
    questionnaire.add_field(db, study_id, field, by=admin["id"])
    questionnaire.add_field(db, study_id, questionnaire.make_field("years", "Years", "number", minimum="0",
                                                                   maximum=""), by=admin["id"])
    assert [f["name"] for f in questionnaire.questionnaire(db, study_id)] == ["expertise", "years"]
    assert "max" not in questionnaire.questionnaire(db, study_id)[1]
    with pytest.raises(QuestionnaireError, match="Two fields are called expertise"):
        questionnaire.add_field(db, study_id, field, by=admin["id"])
    questionnaire.remove_field(db, study_id, "expertise", by=admin["id"])
    assert [f["name"] for f in questionnaire.questionnaire(db, study_id)] == ["years"]
    with pytest.raises(QuestionnaireError, match="has no field"):
        questionnaire.remove_field(db, study_id, "expertise", by=admin["id"])


@pytest.mark.parametrize("field, message", [
    ({**EXPERTISE, "name": "Expertise"}, "is not usable"),
    ({**EXPERTISE, "name": "1st"}, "is not usable"),
    ({**EXPERTISE, "name": "a" * 41}, "is not usable"),
    ({**EXPERTISE, "name": "drop table"}, "is not usable"),
    ({**EXPERTISE, "label": ""}, "the question is empty"),
    ({**EXPERTISE, "label": "x" * 201}, "the limit is 200"),
    ({**EXPERTISE, "label": "two\nlines"}, "control character"),
    ({**EXPERTISE, "kind": "date"}, "kind must be one of"),
    ({**EXPERTISE, "options": ["only one"]}, "2 to 30 options"),
    ({**EXPERTISE, "options": [f"o{i}" for i in range(31)]}, "2 to 30 options"),
    ({**EXPERTISE, "options": "novice,expert"}, "2 to 30 options"),
    ({**EXPERTISE, "options": ["a", "x" * 101]}, "option 2 is 101 characters"),
    ({**EXPERTISE, "options": ["a", "a"]}, "two options are the same"),
    ({**EXPERTISE, "options": ["a", ""]}, "option 2 is empty"),
    ({**YEARS, "min": 10, "max": 5}, "smallest value"),
    ({**YEARS, "min": "ten"}, "must be a number"),
    ({**YEARS, "max": float("inf")}, "finite"),
    ({**YEARS, "options": ["a", "b"]}, "only a choice has options"),
    ({**FIELD, "max": 3}, "only a number has"),
    ({**FIELD, "required": "yes"}, "required must be true or false"),
    ({**FIELD, "colour": "red"}, "unknown key"),
    ("expertise", "must be an object"),
])
def test_a_field_that_cannot_be_kept_is_refused_and_nothing_is_written(db, annotators, admin, field, message):
    study_id = small_study(db, annotators)
    questionnaire.set_questionnaire(db, study_id, [FIELD], by=admin["id"])
    with pytest.raises(QuestionnaireError, match=message):
        questionnaire.set_questionnaire(db, study_id, [EXPERTISE, field], by=admin["id"])
    assert questionnaire.questionnaire(db, study_id) == [FIELD]


def test_at_most_twenty_fields_with_names_of_their_own(db, annotators, admin):
    study_id = small_study(db, annotators)
    many = [{**FIELD, "name": f"f{i}"} for i in range(questionnaire.MAX_FIELDS)]
    assert len(questionnaire.set_questionnaire(db, study_id, many, by=admin["id"])) == 20
    with pytest.raises(QuestionnaireError, match="21 fields; the limit is 20"):
        questionnaire.set_questionnaire(db, study_id, [*many, {**FIELD, "name": "f20"}], by=admin["id"])
    with pytest.raises(QuestionnaireError, match="Two fields are called field"):
        questionnaire.set_questionnaire(db, study_id, [FIELD, FIELD], by=admin["id"])
    with pytest.raises(QuestionnaireError, match="must be a list"):
        questionnaire.set_questionnaire(db, study_id, {"name": "x"}, by=admin["id"])
    with pytest.raises(QuestionnaireError, match="There is no study"):
        questionnaire.set_questionnaire(db, 999, [FIELD], by=admin["id"])


def test_answers_are_kept_as_text_once_and_stamped(db, annotators, asked):
    ann = annotators[0]["id"]
    assert questionnaire.needs_questionnaire(db, asked, ann)
    questionnaire.submit(db, asked, ann, {"expertise": "expert", "years": "7.0", "field": "  chemistry "})
    assert questionnaire.answers_of(db, asked, ann) == {"expertise": "expert", "years": "7", "field": "chemistry"}
    assert not questionnaire.needs_questionnaire(db, asked, ann)
    stamp = db.execute("SELECT questionnaire_at FROM study_annotators WHERE study_id = ? AND user_id = ?",
                       [asked, ann]).fetchone()[0]
    assert stamp > 0
    with pytest.raises(QuestionnaireError, match="answered the questionnaire already"):
        questionnaire.submit(db, asked, ann, {"expertise": "novice", "years": 1})
    assert questionnaire.answers_of(db, asked, ann)["expertise"] == "expert"


def test_an_optional_field_left_blank_is_not_kept_and_numbers_keep_their_decimals(db, annotators, asked):
    ann = annotators[1]["id"]
    questionnaire.submit(db, asked, ann, {"expertise": "some", "years": 2.5, "field": "   "})
    assert questionnaire.answers_of(db, asked, ann) == {"expertise": "some", "years": "2.5"}


@pytest.mark.parametrize("answers, field, message", [
    ({"years": 3}, "expertise", r"Please answer “How expert are you\?”: it is required"),
    ({"expertise": "", "years": 3}, "expertise", "it is required"),
    ({"expertise": "guru", "years": 3}, "expertise", "choose one of the options"),
    ({"expertise": ["expert"], "years": 3}, "expertise", "choose one of the options"),
    ({"expertise": "some"}, "years", "“Years of experience”: it is required"),
    ({"expertise": "some", "years": "many"}, "years", "write a number"),
    ({"expertise": "some", "years": "nan"}, "years", "write a number"),
    ({"expertise": "some", "years": True}, "years", "write a number"),
    ({"expertise": "some", "years": "1" * 41}, "years", "write a number"),
    ({"expertise": "some", "years": 61}, "years", "between 0 and 60"),
    ({"expertise": "some", "years": -1}, "years", "between 0 and 60"),
    ({"expertise": "some", "years": 3, "field": "x" * 201}, "field", "keep it to 200 characters"),
    ({"expertise": "some", "years": 3, "field": "line\nbreak"}, "field", "without line breaks"),
    ({"expertise": "some", "years": 3, "field": "bell\x07"}, "field", "control characters"),
    ({"expertise": "some", "years": 3, "field": 42}, "field", "write a short text"),
    ({"expertise": "some", "years": 3, "age": 40}, None, "has no field 'age'"),
])
def test_an_answer_that_cannot_be_kept_names_its_field_and_nothing_is_written(db, annotators, asked, answers,
                                                                               field, message):
    ann = annotators[0]["id"]
    with pytest.raises(QuestionnaireError, match=message) as refused:
        questionnaire.submit(db, asked, ann, answers)
    assert refused.value.field == field
    assert questionnaire.answers_of(db, asked, ann) == {}
    assert questionnaire.needs_questionnaire(db, asked, ann)


def test_a_number_with_only_a_lower_bound(db, annotators, admin):
    study_id = small_study(db, annotators)
    questionnaire.set_questionnaire(db, study_id, [{"name": "age", "label": "Age", "kind": "number", "min": 18}],
                                    by=admin["id"])
    with pytest.raises(QuestionnaireError, match="at least 18"):
        questionnaire.submit(db, study_id, annotators[0]["id"], {"age": 17})
    questionnaire.submit(db, study_id, annotators[0]["id"], {"age": 1000})


def test_the_questionnaire_comes_after_consent(db, annotators, admin, asked):
    ann = annotators[0]["id"]
    version = consent.set_consent(db, asked, "Consent.", by=admin["id"])
    with pytest.raises(QuestionnaireError, match="consent text first"):
        questionnaire.submit(db, asked, ann, {"expertise": "some", "years": 3})
    consent.accept(db, asked, ann, version)
    questionnaire.submit(db, asked, ann, {"expertise": "some", "years": 3})


def test_refused_to_someone_outside_the_study_or_whose_visit_ended(db, annotators, admin, asked):
    with pytest.raises(QuestionnaireError, match="You do not take part"):
        questionnaire.submit(db, asked, admin["id"], {"expertise": "some", "years": 3})
    consent.set_consent(db, asked, "Consent.", by=admin["id"])
    consent.decline(db, asked, annotators[1]["id"])
    with pytest.raises(QuestionnaireError, match="has ended"):
        questionnaire.submit(db, asked, annotators[1]["id"], {"expertise": "some", "years": 3})
    empty = small_study(db, annotators, name="plain")
    with pytest.raises(QuestionnaireError, match="has no questionnaire"):
        questionnaire.submit(db, empty, annotators[0]["id"], {})


def test_no_rule_and_no_question_before_the_questionnaire(db, annotators, asked):
    ann = annotators[0]["id"]
    with pytest.raises(study.StudyError, match="questionnaire"):
        study.accept_rule(db, asked, ann)
    with pytest.raises(study.StudyError, match="questionnaire"):
        study.open_question(db, asked, ann)
    questionnaire.submit(db, asked, ann, {"expertise": "novice", "years": 0})
    study.accept_rule(db, asked, ann)
    assert study.open_question(db, asked, ann) is not None


def test_a_questionnaire_changed_later_asks_only_people_who_have_not_answered(db, annotators, admin, asked):
    done, waiting = annotators[0]["id"], annotators[1]["id"]
    questionnaire.submit(db, asked, done, {"expertise": "novice", "years": 0})
    questionnaire.set_questionnaire(db, asked, [EXPERTISE], by=admin["id"])
    assert not questionnaire.needs_questionnaire(db, asked, done)
    assert questionnaire.answers_of(db, asked, done) == {"expertise": "novice", "years": "0"}
    assert questionnaire.needs_questionnaire(db, asked, waiting)
    questionnaire.set_questionnaire(db, asked, [], by=admin["id"])  # none at all
    assert not questionnaire.needs_questionnaire(db, asked, waiting)
    study.accept_rule(db, asked, waiting)
