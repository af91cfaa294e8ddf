"""Tasks 1-4: the CSV pair of tables (people and jobs, joined on primeKey)."""

from __future__ import annotations

import random

from structext_core.structext_eval.formats import Document, ReadError, csv_format
from structext_core.structext_eval.tasks._common import question_match
from structext_core.structext_eval.tasks._registry import Task, register


def _csv_field_sample(rng: random.Random, doc: Document) -> dict:
    row = rng.randrange(len(doc.extra["people"]))
    field = rng.choice(csv_format.PEOPLE_COLUMNS[1:] + csv_format.JOBS_COLUMNS[1:])
    return {"field": field, "primeKey": doc.extra["people"][row]["primeKey"]}


def _csv_field_expected(doc: Document, p: dict) -> str:
    for table in ("people", "jobs"):
        for row in doc.extra[table]:
            if row["primeKey"] == p["primeKey"] and p["field"] in row:
                return row[p["field"]]
    raise AssertionError("sampled a missing cell")


def _csv_field_solve(reference: str, p: dict, depth: int, width: int) -> str:
    body = csv_format.table_with(reference, p["field"])
    for row in body:
        if row.get("primeKey") == p["primeKey"]:
            return row[p["field"]]
    raise ReadError(f"no record with primeKey {p['primeKey']!r} has a {p['field']!r}")


register(Task(
    1, "csv", "TextRetrieval", "csv-field-of-record", 0,
    requirement="Answer the cell value only.",
    rule_hint="Find the table that has the asked column, find the row whose primeKey is the given key, "
              "and read the value in that column.",
    sample=_csv_field_sample,
    question=lambda p: f"What is the {p['field']} of record with primeKey {p['primeKey']}?",
    expected=_csv_field_expected,
    parse=lambda q: dict(zip(("field", "primeKey"), question_match(
        r"What is the (.+?) of (?:the )?record with primeKey (.+?)\s*(?:\?|$)", q, "a field and a primeKey").groups())),
    solve=_csv_field_solve,
))


def _salary_sample(rng: random.Random, doc: Document) -> dict:
    return {"threshold": rng.randint(*csv_format.SALARY_RANGE)}


def _salary_solve(reference: str, p: dict, depth: int, width: int) -> str:
    body = csv_format.table_with(reference, "salary")
    return str(sum(csv_format.to_number(r["salary"], "salary") > p["threshold"] for r in body))


register(Task(
    2, "csv", "Statistic", "csv-count-salary-above", 1,
    requirement="Answer an integer.",
    rule_hint="Find the table with the salary column and count the rows whose salary is strictly greater than "
              "the threshold.",
    sample=_salary_sample,
    question=lambda p: f"How many people work with salary more than {p['threshold']}?",
    expected=lambda doc, p: str(sum(int(r["salary"]) > p["threshold"] for r in doc.extra["jobs"])),
    parse=lambda q: {"threshold": float(question_match(r"salary (?:more|greater|higher) than (-?[\d,.]*\d)", q,
                                                "a salary threshold").group(1).replace(",", ""))},
    solve=_salary_solve,
))


def _gender_solve(reference: str, p: dict, depth: int, width: int) -> str:
    body = csv_format.table_with(reference, "gender")
    return str(sum(r["gender"] == p["gender"] for r in body))


register(Task(
    3, "csv", "Statistic", "csv-count-gender", 2,
    requirement="Answer an integer.",
    rule_hint="Find the table with the gender column and count the rows whose gender is the one asked for.",
    sample=lambda rng, doc: {"gender": rng.choice(["male", "female"])},
    question=lambda p: f"How many people are {p['gender']}?",
    expected=lambda doc, p: str(sum(r["gender"] == p["gender"] for r in doc.extra["people"])),
    parse=lambda q: {"gender": question_match(r"How many people are (.+?)\s*\?", q, "a gender").group(1)},
    solve=_gender_solve,
))


def _join_sample(rng: random.Random, doc: Document) -> dict:
    return {"location": rng.choice(csv_format.LOCATIONS), "height": rng.randint(*csv_format.HEIGHT_RANGE)}


def _join_expected(doc: Document, p: dict) -> str:
    where = {r["primeKey"]: r["location"] for r in doc.extra["jobs"]}
    return str(sum(where.get(r["primeKey"]) == p["location"] and int(r["height"]) > p["height"]
                   for r in doc.extra["people"]))


def _join_solve(reference: str, p: dict, depth: int, width: int) -> str:
    people = csv_format.table_with(reference, "height")
    jobs = csv_format.table_with(reference, "location")
    where = {r["primeKey"]: r["location"] for r in jobs}
    return str(sum(where.get(r["primeKey"]) == p["location"]
                   and csv_format.to_number(r["height"], "height") > p["height"] for r in people))


register(Task(
    4, "csv", "Join", "csv-join-location-height", 3,
    requirement="Answer an integer.",
    rule_hint="Join the two tables on primeKey, then count the joined rows whose location is the given one "
              "and whose height is strictly greater than the given height.",
    sample=_join_sample,
    question=lambda p: f"How many people who work in {p['location']} are taller than {p['height']}?",
    expected=_join_expected,
    parse=lambda q: (lambda m: {"location": m.group(1), "height": float(m.group(2))})(
        question_match(r"work in (.+?) (?:and )?are taller than (-?[\d.]*\d)", q, "a location and a height")),
    solve=_join_solve,
))
