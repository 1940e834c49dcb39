"""``mcp-services world check``: each invariant with its violations, exit 0 when the world holds, 1 when it does
not, 2 (and a message naming the knob) on a shape that cannot be built."""

from __future__ import annotations

import pytest

from mcp_services import cli
from mcp_services.worldcheck import report
from mcp_services.worldcheck.invariants import INVARIANTS, Violation


def test_a_world_that_holds_prints_every_invariant_ok_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["world", "check", "--seed", "2", "--size", "small"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("world 2 (8 organisations, 45 people, 4 months of history")
    for inv in INVARIANTS:
        assert any(line.split()[:2] == [inv.name, "ok"] for line in out), inv.name
    assert out[-1] == "every invariant holds"


def test_violations_are_listed_under_their_invariant_and_exit_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = report.check

    def broken(seeded: object) -> dict[str, list[Violation]]:
        found = real(seeded)  # type: ignore[arg-type]
        found["mentions"] = [Violation(f"chat.messages msg_{n:04d}", "mentions ORD-22053, which no service holds")
                             for n in range(5)]
        return found

    monkeypatch.setattr(report, "check", broken)
    assert cli.main(["world", "check", "--size", "small", "--limit", "2"]) == 1
    out = capsys.readouterr().out
    assert "mentions    5 violations" in out and "chat.messages msg_0001: mentions ORD-22053" in out
    assert "msg_0002" not in out and "... and 3 more" in out
    assert out.rstrip().endswith("5 violations: the world does not hold together")


@pytest.mark.parametrize(("args", "message"), [
    (["--size", "huge"], "--size must be one of small, default, large, not 'huge'"),
    (["--organisations", "2"], "--organisations must be a whole number from 6 to 2000, not 2"),
    (["--months", "99"], "--months must be a whole number from 2 to 36, not 99"),
    (["--people", "5"], "--people must be a whole number from 40 to 610"),
    (["--industry", "mining"], "--industry must be one of food and beverage"),
    (["--limit", "-1"], "--limit must be 0 or more"),
])
def test_a_shape_that_cannot_be_built_is_a_clear_error_naming_the_knob(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert cli.main(["world", "check", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcp-services: error: ") and message in err
