"""The crowd (issue 45): how people come to a study and leave it.

- :mod:`.settings`: a study's crowd settings (codes, addresses, time budget, bonus rule, how places
  fill), one row of ``study_crowd`` with its defaults.
- :mod:`.links`: study links (places, expiry, the external id's URL parameter), enrolment exact under
  a race, resume codes.
- :mod:`.consent` and :mod:`.questionnaire`: the lead's versioned consent text and short
  questionnaire, each person's answers.
- :mod:`.outcomes` and :mod:`.payments`: how a person's visit ends (completed, screened out, timed
  out, declined) with the platform's code and address; the payment export.
- :mod:`.dealing` and :mod:`.status`: k people per item, questions held too long going back to the
  pool, each person's status.
- :mod:`.profiles`: the questionnaire's answers as axes of the dashboard, Results and exports.

No Streamlit here: every module is tested as plain Python.
"""
