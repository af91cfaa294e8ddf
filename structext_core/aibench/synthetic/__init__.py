"""A synthetic AIBench made by rule: the embedded default data set.

- ``graphs``: seeded logic graphs (phases; chains, one fan-out/fan-in pair of parallel branches,
  one feedback loop), and the task and modality the generator chose;
- ``rules``: what a figure drawn from a graph answers to each kind of question (one function,
  used for the keys on the undamaged graph and for the right answers on damaged ones);
- ``questions``: levels 1-3 derived from the graph by rule (level 1 with real "No" questions),
  level 4 from the generator's choices;
- ``damage``: the "systems": a dropped node, a rewired edge, a garbled label, merged phases, a blank image;
- ``draw``: a figure in the paper's style (modules as rectangles, data as ellipses, phases as
  boxes, arrows for data flow) at 1024 x 1024;
- ``build``: a whole set written in the import's folder shape, byte-identical per seed, with
  ``truth.jsonl`` (the right answer of every (image, question)) and ``expected.json``.
"""
