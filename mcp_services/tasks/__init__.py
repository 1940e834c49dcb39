"""The task contract that composer, harness and training share.

A task (``spec``) is frozen data with a content-hash id and a JSON Lines file format; its checks
(``checks``) say whether they hold for a run's state diff and final answer; ``episodes`` gives the
private episode a task runs in. It sits below every consumer: it imports only the kernel.
"""
