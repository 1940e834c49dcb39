"""The stages workflows are built from, written once per intent and channel and reused by every workflow.

- ``channels``: trigger (what arrived, on which channel) and the reply on that channel;
- ``lookup``: identify a record through whichever read of its kind reaches it;
- ``rules``: consult a rule where companies keep it;
- ``acts``: act by intent on a record, tell a colleague, log a line on a record.

The decide stage is the workflow's own: the branch its rule or its data decides.
"""
