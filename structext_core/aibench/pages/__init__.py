"""AIBench's own pages (Streamlit scripts, run by the app's navigation) and their rows of the access
table (:mod:`structext_core.studio.access`), named by the member's ``PAGES``: who may open each page,
how the navigation shows it, what it shows each role, and the capabilities only AIBench uses.

Each ``file`` is named from this folder; the URL of each page is its file's name, as it always was.
"""

from structext_core.studio.access import ADMIN, ANNOTATOR, LEAD, RESEARCHER, Capability, Page, rule

PAGES = (
    Page("question_review", "question_review.py", "AIBench question review", ":material/rate_review:", "Annotate",
         "question_review", rule((ANNOTATOR, ADMIN)), work="structext_core.aibench.question_review.campaigns:has_campaign",
         shows="reviewers: only the papers dealt to them (figure, method text, graph, questions with their keys); "
               "never another reviewer's decisions on a double-reviewed paper, nor a paper whose questions they "
               "still answer in an open AIBench study"),
    Page("pairwise", "pairwise.py", "Pairwise comparison", ":material/compare:", "Annotate", "pairwise",
         rule((ANNOTATOR, ADMIN)), work="structext_core.aibench.pairwise.setup:has_study",
         shows="annotators: their own current pair as two blinded images (no system name, paper id or file name, "
               "during or after the study), their progress; never another person's vote"),
    Page("pairwise_admin", "pairwise_admin.py", "Pairwise studies", ":material/leaderboard:", "Admin",
         "pairwise_admin", rule((ADMIN,)),
         shows="admins: pairwise studies, their votes with system names, the human rank, agreement, correlations",
         order=40),
    Page("question_review_admin", "question_review_admin.py", "AIBench review campaigns", ":material/fact_check:",
         "Admin", "question_review_admin", rule((ADMIN,)), order=60),
)

CAPABILITIES = (
    Capability("aibench_people", "AIBench on Results: people beside the VLM solvers (accuracy, agreement) and the "
               "pairwise human rank, without names",
               rule((RESEARCHER, LEAD, ADMIN), condition="as human results; pairwise: the rank, never a vote")),
    Capability("aibench_people_answers", "AIBench on Results: the letters people chose per question, where they and "
               "a solver part on the original figure, sending a question back to review", rule((ADMIN,))),
    Capability("review_export", "AIBench question review: the curated set, provenance and review log (zip)",
               rule((ADMIN,))),
)
