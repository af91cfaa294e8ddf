"""The pieces of the Human baseline page (``pages/human_baseline.py``), which composes them.

UI only; the clock, the blinding and every write live in ``structext_core.studio.study``.

- :mod:`.common`: what every piece shares: the :class:`~.common.Screen` of one page run (who
  answers, in which tab, under which clock settings, with which components), the session keys of a
  question's answer box and tools, the page's messages, the actions' error handling and Give up;
- :mod:`.watches`: the fragments that keep the clock honest (the clock, the input reports, the
  heartbeats of the pause screen);
- :mod:`.reference_viewer`: the reference with search, go to line and "Add lines";
- :mod:`.text_answer`: the answer box of a typed answer and its buttons;
- :mod:`.choice_answer`: a multiple-choice question, with or without an image;
- :mod:`.flag`: "Report a problem with this question";
- :mod:`.practice`: the feedback screen after a practice question;
- :mod:`.studies`: the studies to choose from, the study's rule, the annotator's own progress;
- :mod:`.screens`: the screens shown in place of one another (the question, paused, taken over,
  finished).
"""
