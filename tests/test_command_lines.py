"""Every command line reports errors one way, ``<command>: error: <what> (<how to fix>)`` with exit 2,
and prints the package version; the error cases a new user met say what is true."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from mcp_services.tasks.spec import TaskSpec, load_tasks, write_tasks

REPO = Path(__file__).resolve().parents[1]
Main = Callable[[Sequence[str] | None], Any]


def _mains() -> dict[str, Main]:
    import composer.cli
    import generator.cli
    import harness.cli
    import mcp_services.cli
    import training.cli

    return {
        "mcp-services": mcp_services.cli.main,
        "composer": composer.cli.main,
        "harness": harness.cli.main,
        "generator": generator.cli.main,
        "training": training.cli.main,
    }


def run(prog: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``prog argv`` run in this process."""
    try:
        code = _mains()[prog](argv)
    except SystemExit as done:
        code = done.code
    out, err = capsys.readouterr()
    return int(code or 0), out, err


def one_error_line(prog: str, err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("prog", ["mcp-services", "composer", "harness", "generator", "training"])
def test_every_command_prints_the_package_version(prog: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(prog, ["--version"], capsys)
    assert code == 0 and out == f"{prog} {metadata.version('compoworld')}\n"


@pytest.mark.parametrize("prog", ["mcp-services", "composer", "harness", "generator", "training"])
@pytest.mark.parametrize("argv", [["--no-such-option"], ["no-such-command"]])
def test_a_usage_mistake_is_one_line_that_says_where_help_is(
    prog: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(prog, argv, capsys)
    assert code == 2
    assert one_error_line(prog, err).endswith(f"(see `{prog} --help`)")


def test_a_subcommand_mistake_names_the_subcommand_s_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run("harness", ["collect", "--rollouts", "many"], capsys)
    assert code == 2 and one_error_line("harness", err).endswith("(see `harness collect --help`)")


# -- the cases of issue 26 ----------------------------------------------------------------------------


@pytest.fixture
def prefixed_tasks(tmp_path: Path) -> tuple[Path, str, list[str]]:
    """A task file in which some id prefix starts several ids: (file, that prefix, the ids it starts)."""
    base = load_tasks(REPO / "tests" / "fixtures" / "task_contract_v1.jsonl")[0]
    fields = base.model_dump(exclude={"id"})
    tasks = [TaskSpec.build(**{**fields, "instruction": f"{base.instruction} ({n})"}) for n in range(17)]
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, tasks)
    first = next(t.id[0] for t in tasks if sum(u.id[0] == t.id[0] for u in tasks) > 1)  # 17 ids, 16 hex digits
    return path, first, [t.id for t in tasks if t.id.startswith(first)]


def test_composer_audit_says_an_id_prefix_is_ambiguous_and_names_the_ids(
    prefixed_tasks: tuple[Path, str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, prefix, ids = prefixed_tasks
    code, _, err = run("composer", ["audit", str(path), "--id", prefix], capsys)
    line = one_error_line("composer", err)
    assert code == 2
    assert f"task id {prefix!r} is ambiguous in {path}: {len(ids)} task ids start with it" in line
    assert all(task_id[:12] in line for task_id in ids[:5]) and line.endswith("(give more characters of the id)")
    code, _, err = run("composer", ["audit", str(path), "--id", "zz"], capsys)
    assert code == 2 and "no task with id 'zz'" in one_error_line("composer", err)


def test_harness_serve_and_grade_say_the_same_about_an_ambiguous_id(
    prefixed_tasks: tuple[Path, str, list[str]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path, prefix, ids = prefixed_tasks
    code, _, err = run("harness", ["grade", "--tasks", str(path), "--task", prefix, "--db", str(tmp_path)], capsys)
    assert code == 2 and f"{len(ids)} task ids start with it" in one_error_line("harness", err)


def test_harness_regrade_of_a_missing_run_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "runs" / "qwen"
    code, _, err = run("harness", ["regrade", "--run", str(missing)], capsys)
    assert code == 2
    assert one_error_line("harness", err) == (
        f"harness: error: --run {missing} does not exist (give the --out folder of a `harness collect` run)"
    )
    missing.mkdir(parents=True)
    code, _, err = run("harness", ["regrade", "--run", str(missing)], capsys)
    assert code == 2 and "holds no tasks.jsonl (pass --tasks FILE" in one_error_line("harness", err)
    assert not list(missing.iterdir())


def test_generator_import_of_invalid_json_is_an_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"tools": [\n')
    out = tmp_path / "catalog"
    code, stdout, err = run("generator", ["import", str(bad), "--out", str(out)], capsys)
    assert code == 2 and stdout == "" and not out.exists()
    assert f"{bad} is not valid JSON (Expecting value at line 2, column 1)" in one_error_line("generator", err)


def test_ray_address_auto_without_a_cluster_says_what_auto_means(monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.ray_backend as ray_backend

    class NoCluster:  # ray, where `ray.init(address="auto")` finds nothing to join
        @staticmethod
        def is_initialized() -> bool:
            return False

        @staticmethod
        def init(**kwargs: Any) -> None:
            assert kwargs["address"] == "auto"
            raise ConnectionError("Could not find any running Ray instance. Please specify the one to connect to "
                                  "by setting `--address` flag or `RAY_ADDRESS` environment variable.")

    monkeypatch.setattr(ray_backend, "_import_ray", lambda: NoCluster)
    with pytest.raises(ray_backend.RayUnavailableError) as refused:
        ray_backend.connect(ray_backend.RayOptions(address="auto"))
    message = str(refused.value)
    assert message.startswith("--address auto found no Ray cluster running on this machine (start one with")
    assert "setting `--address`" not in message


def test_a_missing_extra_is_an_install_line(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_services.command_line import run_command

    def needs_vllm() -> int:
        raise ModuleNotFoundError("No module named 'vllm'", name="vllm")

    assert run_command("harness", needs_vllm) == 2
    assert capsys.readouterr().err == "harness: error: vllm is not installed (pip install 'compoworld[vllm]')\n"


def test_an_input_error_is_what_then_how_to_fix(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_services.command_line import InputError, run_command

    def refuse() -> int:
        raise InputError("--n must be at least 1 (got 0)", "pass --n 1 or more")

    assert run_command("composer", refuse) == 2
    assert capsys.readouterr().err == "composer: error: --n must be at least 1 (got 0) (pass --n 1 or more)\n"


def test_third_party_info_logs_are_off_unless_verbose() -> None:
    import logging

    from mcp_services.command_line import CHATTY_LOGGERS, configure_logging

    from mcp.server.mcpserver import MCPServer

    try:
        configure_logging(verbose=False)
        MCPServer("quiet")  # an MCP server configures the root logger at INFO unless it is configured already
        for name in ("httpx", "httpx2"):  # the MCP client's requests go through httpx2
            assert not logging.getLogger(name).isEnabledFor(logging.INFO)
            assert logging.getLogger(name).isEnabledFor(logging.WARNING)
        configure_logging(verbose=True)
        assert logging.getLogger("httpx").isEnabledFor(logging.INFO)
    finally:
        for name in CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(logging.NOTSET)


def test_readmes_commands_write_only_into_folders_git_ignores() -> None:
    """Issue 33: README's commands left tasks.jsonl, graph/ and report.html untracked in the checkout."""
    import shlex

    ignored = tuple(line.strip().lstrip("/") for line in (REPO / ".gitignore").read_text().splitlines()
                    if line.strip().endswith("/") and not line.startswith("#"))
    assert "runs/" in ignored and "out/" in ignored
    written: list[tuple[str, str]] = []
    for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines():
        if not line.startswith(".venv/bin/"):
            continue
        words = shlex.split(line.split("  #")[0].rstrip(" \\"))
        if words[0] == ".venv/bin/composer" and words[1] == "generate":
            assert "--out" in words, f"composer generate writes tasks.jsonl into the checkout unless --out: {line}"
        written += [(line, path) for flag, path in zip(words, words[1:]) if flag == "--out"]
    assert len(written) >= 10
    stray = [(path, line) for line, path in written
             if not path.startswith(("~", "/")) and not path.startswith(ignored)]
    assert not stray, f"README commands that write into the checkout outside {ignored}: {stray}"


@pytest.mark.slow
def test_the_task_id_readme_names_is_the_first_task_its_generate_command_writes(tmp_path: Path) -> None:
    """README's audit/serve/grade lines name a task by id: it must be the first that its generate line writes."""
    import re

    import composer.cli

    text = (REPO / "README.md").read_text(encoding="utf-8")
    named = re.search(r"`([0-9a-f]{8})` is the id \(a prefix is enough\) of the first task that `composer generate --n 200 "
                      r"--seed 0` writes", text)
    assert named is not None
    ids = {task or audited for task, audited in re.findall(r"--task ([0-9a-f]{8})|--id ([0-9a-f]{8})", text)}
    assert ids == {named.group(1)}
    out = tmp_path / "tasks.jsonl"
    assert composer.cli.main(["generate", "--n", "200", "--seed", "0", "--out", str(out)]) in (0, None)
    assert load_tasks(out)[0].id.startswith(named.group(1))
