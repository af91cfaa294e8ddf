"""StrucText-Eval's own pages (Streamlit scripts, run by the app's navigation): Real-Test rewriting
and its campaigns, with their rows of the access table (:mod:`structext_core.studio.access`), named
by the member's ``PAGES``. Each ``file`` is named from this folder; the URL of each page is its
file's name, as it always was.
"""

from structext_core.studio.access import ADMIN, ANNOTATOR, Page, rule

PAGES = (
    Page("rewrite", "rewrite.py", "Real-Test rewriting", ":material/edit_note:", "Annotate", "rewrite",
         rule((ANNOTATOR, ADMIN)), work="structext_core.structext_eval.campaign.items:has_campaign"),
    Page("campaign_admin", "campaign_admin.py", "Rewrite campaigns", ":material/folder_managed:", "Admin",
         "campaign_admin", rule((ADMIN,))),
)
