"""The gate: contract tests run in a subprocess with a time limit; a tool is implemented only when green."""

from generator.gate.report import STATUSES, Check, GateReport, ServiceVerdict, Status, ToolVerdict
from generator.gate.runner import GateJob, GateOutcome, TimeLimit, run_gate

__all__ = [
    "STATUSES",
    "Check",
    "GateJob",
    "GateOutcome",
    "GateReport",
    "ServiceVerdict",
    "Status",
    "TimeLimit",
    "ToolVerdict",
    "run_gate",
]
