"""The task contract that composer, harness and training share.

``spec``: a task as frozen data with a content-hash id, and its file format (``tasks.jsonl``);
``checks``: the checks on a run's outcome, each saying whether it holds; ``grading``: the rubric
and the grade; ``episodes``: the private episode a task runs in. It imports only the kernel.
"""
