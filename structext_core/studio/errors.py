"""The error of the studio's timed work (studies, pairwise voting): its own module so the honest
clock (:mod:`structext_core.studio.clock`), which the study package imports, can raise it
without importing that package."""


class StudyError(ValueError):
    """A user-caused problem with a study or an answer; the message says what to do."""
