"""``compile_service``: a ``ServiceSpec`` -> a kernel ``Service``, mounted and served like a hand-written one."""

from __future__ import annotations

from collections.abc import Mapping

from mcp_services.kernel.context import ToolContext
from mcp_services.kernel.service import Service

from generator.compiler.grid import FUNCTIONS as GRID
from generator.compiler.grid import seed_grid
from generator.compiler.runtime import ServiceRuntime
from generator.compiler.seed import seed_service
from generator.compiler.tables import add_entities, add_simulated_calls
from generator.compiler.simulated import SimulatedTool
from generator.compiler.tools import CompiledTool, CustomFunction, CustomTool
from generator.query.apply import with_languages
from generator.spec import ServiceSpec
from generator.worldmodel import AnswerCache, WorldModel


class CompileError(ValueError):
    """A spec the compiler cannot turn into a service (e.g. a custom tool without its function)."""


def compile_service(
    spec: ServiceSpec,
    *,
    custom: Mapping[str, CustomFunction] | None = None,
    world_model: WorldModel | None = None,
) -> Service:
    """The service ``spec`` describes: its entities on the kernel, tools, and a seed from the world.

    ``custom`` maps function names to the functions of custom tools; ``world_model`` answers
    simulated tools (default: the configured one, see ``generator.worldmodel``).
    """
    spec = with_languages(spec)  # products' query and address languages, read from the spec
    service = Service(spec.name, spec.description, title=spec.title or None)
    records = add_entities(service, spec)
    simulated = add_simulated_calls(service) if any(t.behaviour.kind == "simulated" for t in spec.tools) else None
    runtime = ServiceRuntime(spec, records, simulated)
    service.runtime = runtime  # type: ignore[attr-defined] - for the gate and custom-tool authors
    service.spec = spec  # type: ignore[attr-defined]
    cache = AnswerCache()
    for definition in spec.tools:
        kind = definition.behaviour.kind
        if kind == "simulated":
            service.add_tool(SimulatedTool(runtime, definition, cache, world_model))
        elif kind == "custom":
            function = (custom or {}).get(definition.behaviour.function or "") or GRID.get(definition.behaviour.function or "")
            if function is None:
                raise CompileError(
                    f"tool {spec.name}.{definition.name} is custom but its function "
                    f"{definition.behaviour.function!r} was not given"
                )
            service.add_tool(CustomTool(runtime, definition, function))
        else:
            service.add_tool(CompiledTool(runtime, definition))

    def seed(ctx: ToolContext) -> None:
        seed_service(runtime, ctx)
        seed_grid(runtime, ctx)

    service.seeder(seed)
    return service
