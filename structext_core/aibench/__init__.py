"""AIBench (arXiv 2603.28068): can an image-generation model draw a paper's method figure?

A peer of :mod:`structext_core.structext_eval` (StrucText-Eval). Its modules:

- ``model``: what an item is (paper, logic graph, question), the solver's prompt, the letter
  parsed from a reply;
- ``limits``: bounds on everything an import reads;
- ``papers``: one paper's JSON checked into a :class:`~structext_core.aibench.model.Paper`;
- ``images``: one image checked and re-encoded without its metadata (run in a worker process);
- ``dataset``: a folder of papers, images and aesthetic scores checked as a whole, then stored;
- ``predictions``: solver predictions in JSONL;
- ``scoring``: the paper's scores (level accuracy, aesthetics, overall) with n and 95% intervals;
- ``paper``: the paper's printed tables (``structext_core/data/aibench_paper``);
- ``synthetic``: a synthetic AIBench made by rule, with damaged "systems" whose right answers are known.
"""
