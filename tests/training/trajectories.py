"""Small, realistic trajectories as `harness collect` writes them (schema_version 1)."""

from __future__ import annotations

import json
from typing import Any

SYSTEM = "You are a support agent. Use the tools to act on the user's request, then report what you did."
INSTRUCTION = (
    "Ana Ruiz says her January invoice was charged twice. Refund the duplicate charge and note the refund id "
    "on her open helpdesk ticket."
)
EMAIL = "ana.ruiz@brightline.example"
TOOL_RESULTS = {
    "contacts": json.dumps({"success": True, "data": [{"id": "c_0007", "name": "Ana Ruiz", "email": EMAIL}]}),
    "charges": json.dumps(
        {"success": True, "data": [{"id": "ch_0041", "amount": "812.00"}, {"id": "ch_0042", "amount": "812.00"}]}
    ),
    "refund": json.dumps({"success": True, "data": {"refund_id": "re_0007", "charge_id": "ch_0042"}}),
    "tickets": json.dumps({"success": True, "data": [{"id": "T-1042", "status": "open"}]}),
    "note": json.dumps({"success": True, "data": {"ticket_id": "T-1042", "note_id": "n_0003"}}),
}
FINAL_ANSWER = "Done: I refunded the duplicate charge ch_0042 (refund re_0007) and noted it on ticket T-1042."


def _tool(name: str, description: str, **properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": sorted(properties)},
        },
    }


_STRING: dict[str, Any] = {"type": "string"}
TOOLS = [
    _tool("crm__search_contacts", "Search contacts by name or email.", query=_STRING),
    _tool("payments__list_charges", "List a customer's charges.", customer_email={"type": "string", "format": "email"}),
    _tool("payments__refund_charge", "Refund a charge in full.", charge_id=_STRING),
    _tool("helpdesk__list_tickets", "List a customer's tickets.", email=_STRING, status=_STRING),
    _tool("helpdesk__add_ticket_note", "Add a note to a ticket.", ticket_id=_STRING, note=_STRING),
]


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    # The harness stores arguments as the model wrote them: a JSON string, here compact on purpose.
    arguments_json = json.dumps(arguments, separators=(",", ":"))
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments_json}}


def _assistant(content: str | None, *calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def _result(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def conversation(answer: str = FINAL_ANSWER) -> list[dict[str, Any]]:
    """system → user → 4 assistant turns with tool calls (one with two parallel calls) → final answer."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": INSTRUCTION},
        _assistant(None, _call("call_1", "crm__search_contacts", query="Ana Ruiz")),
        _result("call_1", TOOL_RESULTS["contacts"]),
        _assistant(
            "I found Ana. Next, her charges and open tickets.",
            _call("call_2", "payments__list_charges", customer_email=EMAIL),
            _call("call_3", "helpdesk__list_tickets", email=EMAIL, status="open"),
        ),
        _result("call_2", TOOL_RESULTS["charges"]),
        _result("call_3", TOOL_RESULTS["tickets"]),
        _assistant("", _call("call_4", "payments__refund_charge", charge_id="ch_0042")),
        _result("call_4", TOOL_RESULTS["refund"]),
        _assistant(None, _call("call_5", "helpdesk__add_ticket_note", ticket_id="T-1042", note="Refunded re_0007")),
        _result("call_5", TOOL_RESULTS["note"]),
        {"role": "assistant", "content": answer},
    ]


def make_trajectory(
    task_id: str, rollout: int = 0, *, passed: bool = True, answer: str = FINAL_ANSWER
) -> dict[str, Any]:
    """One trajectory record in the harness's format (schema_version 1)."""
    criteria = {"refund-issued": True, "ticket-noted": passed}
    return {
        "schema_version": 1,
        "task_id": task_id,
        "rollout": rollout,
        "agent": {"kind": "scripted", "model": "fixture"},
        "messages": conversation(answer),
        "tools": TOOLS,
        "criteria": criteria,
        "rubric_score": sum(criteria.values()) / len(criteria),
        "passed": passed,
        "n_tool_calls": 5,
        "n_service_calls": 5,
        "timings": {"total_s": 1.5},
    }


def short_trajectory(task_id: str, rollout: int = 0, *, with_tools: bool = True) -> dict[str, Any]:
    """A one-call conversation: few tokens, so a step on the CPU stays fast (the 151k-token head dominates).

    Without tools the template skips its ~150-token tools preamble: for tests about anything but tools.
    """
    record = make_trajectory(task_id, rollout)
    record["tools"] = [TOOLS[2]] if with_tools else []
    record["messages"] = [
        {"role": "user", "content": "Refund charge ch_0042."},
        _assistant(None, _call("call_1", "payments__refund_charge", charge_id="ch_0042")),
        _result("call_1", TOOL_RESULTS["refund"]),
        {"role": "assistant", "content": f"Refunded as re_0007 ({task_id})."},
    ]
    return record
