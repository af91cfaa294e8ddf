"""Migration 15: the crowd arrives (issue 45): study links, consent, a questionnaire, outcomes and
payments, places dealt k per item, leads who are not admins, and one-time set-password links.

- ``users.role`` may also be ``lead``: a person who runs the studies they lead (``study_leads``)
  and administers nothing else. The CHECK is loosened in the schema's text, as migration 5 did.
- ``study_leads``: who leads which study (the lead who creates a study leads it; an admin may add
  leads). Admins run every study without a row here.
- ``enrolment_links``: a study's link for a crowd: its unguessable ``token`` (the lead copies the
  link again at any time, so it is kept as it is), its ``places``, an optional expiry, and the name
  of the URL parameter that carries a person's external id (``PROLIFIC_PID``; NULL: none). A link
  closed by the lead takes nobody more.
- ``participants``: an account made by a link: its link, the external id and the other platform
  parameters it arrived with (``STUDY_ID``, ``SESSION_ID``: ``params``, JSON), and the sha256 of
  its resume code (the code is shown once; only its hash is kept). One external id makes one
  account per study (``UNIQUE (study_id, external_id)``; NULL ids never collide).
- ``study_crowd``: a study's settings for the people it takes: the consent text's current version,
  the questionnaire (``questionnaire``: JSON list of fields), the platform's codes and addresses
  for completed, screened out and no consent, a time budget per person, the bonus rule (per
  correct answer, capped, in a currency), and how places fill: ``per_item`` (k people answer each
  item; NULL: everyone answers every item, as before), ``per_person`` (questions dealt to one
  person; NULL: as many as there are) and ``hold_seconds`` (a dealt question nobody answers for that
  long goes back to the pool; NULL: held until answered).
- ``consent_texts``: every version of a study's consent text (Markdown), kept whole.
- ``study_annotators`` gains what is recorded of each person in a study, however they came:
  ``consent_version``/``consent_at`` (accepted), ``declined_at``, ``questionnaire_at`` (answered),
  and ``outcome`` (``completed``, ``screened_out``, ``timed_out``, ``declined``) with ``outcome_at``.
- ``questionnaire_answers``: one row per person, study and field (the value as text).
- ``password_links``: one-time set-password links for people an admin or lead brought in by CSV:
  the sha256 of the token, who made it, when it expires and when it was used.
"""

from __future__ import annotations

import re

import sqlite_utils

from structext_core.studio.migrations import run_script

NAME = "the crowd: study links, consent, questionnaire, outcomes, k per item, leads, set-password links"

_ROLE_CHECK = re.compile(r"CHECK \(role IN \([^)]*\)\)")


def migrate(db: sqlite_utils.Database) -> None:
    """Create the crowd's tables and columns; let ``users.role`` be ``lead``."""
    run_script(
        db,
        """
        CREATE TABLE study_leads (
            study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            added_by INTEGER REFERENCES users(id),
            added_at REAL NOT NULL,
            PRIMARY KEY (study_id, user_id)
        );
        CREATE INDEX study_leads_by_user ON study_leads (user_id);
        CREATE TABLE enrolment_links (
            id INTEGER PRIMARY KEY,
            study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
            token TEXT NOT NULL UNIQUE,
            places INTEGER NOT NULL CHECK (places > 0),
            expires_at REAL,
            id_param TEXT,
            created_by INTEGER REFERENCES users(id),
            created_at REAL NOT NULL,
            closed_at REAL
        );
        CREATE TABLE participants (
            user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
            study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
            link_id INTEGER NOT NULL REFERENCES enrolment_links(id) ON DELETE CASCADE,
            external_id TEXT,
            params TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params)),
            resume_hash TEXT NOT NULL,
            enrolled_at REAL NOT NULL,
            UNIQUE (study_id, external_id)
        );
        CREATE INDEX participants_by_link ON participants (link_id);
        CREATE TABLE study_crowd (
            study_id INTEGER PRIMARY KEY REFERENCES studies(id) ON DELETE CASCADE,
            consent_version INTEGER,
            questionnaire TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(questionnaire)),
            completion_code TEXT,
            completion_url TEXT,
            screenout_code TEXT,
            screenout_url TEXT,
            no_consent_code TEXT,
            no_consent_url TEXT,
            time_budget_seconds REAL CHECK (time_budget_seconds IS NULL OR time_budget_seconds > 0),
            bonus_per_correct REAL NOT NULL DEFAULT 0 CHECK (bonus_per_correct >= 0),
            bonus_cap REAL CHECK (bonus_cap IS NULL OR bonus_cap >= 0),
            currency TEXT NOT NULL DEFAULT 'GBP',
            per_item INTEGER CHECK (per_item IS NULL OR per_item > 0),
            per_person INTEGER CHECK (per_person IS NULL OR per_person > 0),
            hold_seconds REAL CHECK (hold_seconds IS NULL OR hold_seconds > 0),
            updated_by INTEGER REFERENCES users(id),
            updated_at REAL NOT NULL
        );
        CREATE TABLE consent_texts (
            study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
            version INTEGER NOT NULL CHECK (version > 0),
            text TEXT NOT NULL,
            created_by INTEGER REFERENCES users(id),
            created_at REAL NOT NULL,
            PRIMARY KEY (study_id, version)
        );
        ALTER TABLE study_annotators ADD COLUMN consent_version INTEGER;
        ALTER TABLE study_annotators ADD COLUMN consent_at REAL;
        ALTER TABLE study_annotators ADD COLUMN declined_at REAL;
        ALTER TABLE study_annotators ADD COLUMN questionnaire_at REAL;
        ALTER TABLE study_annotators ADD COLUMN outcome TEXT
            CHECK (outcome IS NULL OR outcome IN ('completed', 'screened_out', 'timed_out', 'declined'));
        ALTER TABLE study_annotators ADD COLUMN outcome_at REAL;
        CREATE TABLE questionnaire_answers (
            study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            field TEXT NOT NULL,
            value TEXT NOT NULL,
            answered_at REAL NOT NULL,
            PRIMARY KEY (study_id, user_id, field)
        );
        CREATE TABLE password_links (
            id INTEGER PRIMARY KEY,
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            token_hash TEXT NOT NULL UNIQUE,
            created_by INTEGER REFERENCES users(id),
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            used_at REAL
        )
        """,
    )
    sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'users'").fetchone()[0]
    new_sql, found = _ROLE_CHECK.subn("CHECK (role IN ('annotator', 'researcher', 'lead', 'admin'))", sql)
    if found != 1:
        raise RuntimeError(f"migration 15: expected one role CHECK in the users table, found {found}: {sql}")
    schema_version_now = db.execute("PRAGMA schema_version").fetchone()[0]
    db.execute("PRAGMA writable_schema = ON")
    try:
        db.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'users'", [new_sql])
        # A new schema version makes every connection (this one too) read the changed table.
        db.execute(f"PRAGMA schema_version = {int(schema_version_now) + 1}")
    finally:
        db.execute("PRAGMA writable_schema = OFF")
