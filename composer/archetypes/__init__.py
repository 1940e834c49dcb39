"""The library of business workflow archetypes, one module per family of work.

Importing this package registers every archetype in ``composer.scenario.ARCHETYPES``. An archetype
takes part in a task set when the services it needs are in the catalog.
"""

from __future__ import annotations

from composer.archetypes import (  # noqa: F401 - registration
    access,
    campaign_results,
    client_files,
    commerce,
    credit_notes,
    drafts,
    engagement,
    expense_entry,
    finance,
    generic,
    guest_lists,
    interviews,
    invitations,
    knowledge,
    operations,
    opt_in,
    payables,
    people,
    questions,
    requests,
    return_window,
    sales,
    shared_links,
    shipping_labels,
    stock,
    support,
    ticket_merge,
)

__all__ = ["access", "campaign_results", "client_files", "commerce", "credit_notes", "drafts", "engagement", "expense_entry", "finance", "generic", "guest_lists", "interviews", "invitations", "knowledge", "operations", "opt_in", "payables", "people", "questions", "requests", "return_window", "sales", "shared_links", "shipping_labels", "stock", "support", "ticket_merge"]
