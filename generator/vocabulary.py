"""Words for seeded values that the World does not hold: what a project, a task, a label or a meeting is
called in a real workspace. ``values.py`` picks from these by what a field means and what its row is.

People, emails, phones, companies, places, products and addresses always come from the World; these
lists only name the things people make (a board, a campaign, a ticket) and say what they write.
"""

from __future__ import annotations

#: Entity words -> the kind of thing a row is, for naming it.
KINDS: dict[str, str] = {
    **dict.fromkeys(("task", "todo", "issue", "ticket", "card", "story", "bug", "subtask", "checklist", "item",
                     "action", "step", "milestone", "epic", "request", "incident", "case", "problem", "job"), "task"),
    **dict.fromkeys(("project", "board", "workspace", "space", "portfolio", "program", "initiative", "goal",
                     "objective", "roadmap", "sprint", "release", "version", "iteration", "cycle"), "project"),
    **dict.fromkeys(("repo", "repository", "service", "app", "application", "package", "library", "pipeline",
                     "environment", "deployment", "branch", "runner", "integration", "bot", "function"), "software"),
    **dict.fromkeys(("event", "meeting", "call", "appointment", "session", "webinar", "booking", "reservation",
                     "interview", "calendar", "schedule", "slot", "shift", "visit", "class", "course", "lesson"), "meeting"),
    **dict.fromkeys(("email", "message", "mail", "draft", "thread", "conversation", "reply", "chat", "post",
                     "notification", "sms", "fax", "letter", "envelope"), "message"),
    **dict.fromkeys(("document", "doc", "file", "page", "note", "template", "report", "folder", "attachment",
                     "sheet", "spreadsheet", "form", "survey", "article", "wiki", "snippet", "asset", "media",
                     "image", "photo", "video", "recording", "contract", "agreement", "policy", "dashboard"), "document"),
    **dict.fromkeys(("campaign", "list", "segment", "newsletter", "audience", "sequence", "cadence", "automation",
                     "journey", "flow", "workflow", "ad", "promotion", "coupon", "discount", "offer"), "campaign"),
    **dict.fromkeys(("channel", "group", "team", "usergroup", "department", "unit", "squad", "circle", "room",
                     "community", "forum", "role", "queue"), "team"),
    **dict.fromkeys(("label", "tag", "category", "topic", "status", "stage", "type", "field", "property",
                     "attribute", "option", "priority", "filter", "view", "column", "section", "collection"), "label"),
    **dict.fromkeys(("webhook", "hook", "key", "token", "credential", "secret", "subscription", "endpoint",
                     "connection", "rule", "trigger", "alert", "monitor", "check", "setting", "settings",
                     "preference", "config", "configuration"), "setting"),
    **dict.fromkeys(("invoice", "bill", "order", "payment", "charge", "refund", "quote", "estimate", "receipt",
                     "transaction", "expense", "payout", "transfer", "credit", "deposit", "budget", "account",
                     "ledger", "journal", "tax", "plan", "price", "product", "sku", "subscription_item",
                     "shipment", "package", "parcel", "label_shipping", "return", "deal", "opportunity",
                     "pipeline_stage"), "business"),
}

NAMES: dict[str, tuple[str, ...]] = {
    "task": ("Update the onboarding checklist", "Fix the login timeout on mobile", "Prepare the Q3 board deck",
             "Review the vendor contract", "Migrate invoices to the new template", "Call back about the late delivery",
             "Renew the SSL certificate", "Draft the release notes", "Reconcile the March card statement",
             "Set up the new hire's laptop", "Audit user permissions", "Send the renewal quote",
             "Book the team offsite venue", "Clean up duplicate contacts", "Investigate the failed payout",
             "Translate the help center article", "Collect feedback from the pilot customers",
             "Archive last year's projects", "Schedule the security review", "Order replacement monitors"),
    "project": ("Website redesign", "Customer onboarding revamp", "Q3 product launch", "Office move",
                "Data warehouse migration", "Partner portal", "Support knowledge base", "Mobile app 2.0",
                "Annual budget planning", "Brand refresh", "Sales enablement kit", "Hiring plan 2025",
                "Billing system upgrade", "Customer advisory board", "EMEA expansion", "Compliance readiness"),
    "software": ("billing-service", "customer-portal", "mobile-app", "data-pipeline", "auth-gateway",
                 "marketing-site", "invoice-worker", "search-index", "notifications", "admin-console",
                 "payments-api", "reporting-jobs"),
    "meeting": ("Weekly team sync", "Quarterly business review", "Onboarding kickoff", "Contract renewal call",
                "Product demo", "Budget review", "1:1 check-in", "Sprint planning", "Customer success review",
                "Interview: senior accountant", "Vendor negotiation", "All-hands meeting", "Design critique",
                "Security incident retro", "Board prep session"),
    "message": ("Invoice for March", "Re: contract renewal", "Your order has shipped", "Meeting notes from Tuesday",
                "Question about my account", "Updated quote attached", "Welcome to the team",
                "Re: delivery delay", "Payment received, thank you", "Follow-up on our call",
                "Action needed: confirm your details", "Re: refund request", "Agenda for Thursday",
                "Reminder: timesheets due Friday", "Your support request has been received"),
    "document": ("Q3 sales report", "Employee handbook", "Master services agreement", "Onboarding guide",
                 "Product roadmap", "Expense policy", "Board meeting minutes", "Customer case study",
                 "Security whitepaper", "Price list 2025", "Brand guidelines", "Incident postmortem",
                 "Vendor comparison", "Training plan", "Release notes"),
    "campaign": ("Spring newsletter", "Product launch announcement", "Win-back offer", "Webinar invitations",
                 "Renewal reminders", "Customer survey", "Holiday promotion", "Trial nurture sequence",
                 "Event follow-up", "Referral program"),
    "team": ("support", "sales", "engineering", "finance", "marketing", "operations", "design", "customer-success",
             "leadership", "it-helpdesk", "partnerships", "recruiting"),
    "label": ("Urgent", "Billing", "Follow up", "Customer", "Internal", "Waiting on customer", "Bug", "Feature request",
              "VIP", "Renewal", "Onboarding", "Escalated", "Low priority", "Newsletter", "Receipts"),
    "setting": ("Order sync", "Slack notifications", "Nightly export", "CRM integration", "Payment alerts",
                "Backup schedule", "Single sign-on", "Invoice reminders", "Inventory sync", "Lead routing"),
    "business": ("Standard plan", "Annual renewal", "Hardware order", "Consulting retainer", "Office supplies",
                 "Enterprise license", "Implementation services", "Support add-on", "Starter bundle",
                 "Replacement parts"),
}

#: What people write in a free-text field, by the kind of row it is on.
TEXTS: dict[str, tuple[str, ...]] = {
    "task": ("The export fails for accounts with more than 500 invoices; reproduce on staging first.",
             "Customer asked for this before the end of the month.", "Blocked until legal signs off on the wording.",
             "Steps: update the template, test with two accounts, then roll out.",
             "Assigned after the Monday triage; see the linked ticket for context."),
    "message": ("Hi, could you send me the updated invoice? Thanks.", "Thanks for the quick turnaround on this request.",
                "Following up on our call earlier this week.", "Please find the signed contract attached.",
                "The delivery arrived two days late; can we discuss a credit?",
                "Can we move our meeting to Thursday afternoon?"),
    "document": ("Summary of the quarter's results with the regional breakdown.",
                 "Draft for review; comments welcome before Friday.", "Approved by finance on the last review.",
                 "Covers the onboarding steps for new customers, from kickoff to go-live."),
    "default": ("Please review the attached figures before Friday.", "Following up on our call earlier this week.",
                "Customer asked for an updated quote with volume pricing.", "Renewal approved; send the contract for signature.",
                "Internal note: confirm the billing address first.", "Shipment delayed by two days because of weather.",
                "Thanks for the quick turnaround on this request.", "Moved to next week at the customer's request."),
}

#: Second lines of an address.
ADDRESS_LINES = ("Suite 200", "Floor 3", "Unit 12", "Building B", "Apt 4C", "Suite 1500", "Room 210")
#: Types, roles and the like, by the word that names the field.
CHOICES: dict[str, tuple[str, ...]] = {
    "priority": ("high", "medium", "low"),
    "role": ("admin", "member", "viewer", "editor"),
    "source": ("web", "email", "phone", "referral", "api"),
    "channel": ("email", "sms", "web", "phone"),
    "type": ("standard", "internal", "external"),
    "kind": ("standard", "internal", "external"),
    "category": ("general", "billing", "technical", "sales"),
    "level": ("basic", "standard", "advanced"),
    "method": ("card", "bank_transfer", "cash"),
    "frequency": ("monthly", "weekly", "yearly"),
    "interval": ("month", "week", "year"),
    "gender": ("female", "male", "nonbinary"),
    "visibility": ("private", "internal", "public"),
    "permission": ("read", "write", "admin"),
    "format": ("pdf", "csv", "json"),
}
#: Opaque-looking values some fields hold (a MIME type, a file extension).
MIME_TYPES = ("application/pdf", "text/csv", "image/png", "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
REGIONS = ("EMEA", "APAC", "Americas", "North", "South", "West", "East")
