"""The generator: tool specifications -> verified CompoWorld services, the world model, the catalog.

    from generator import import_file, ImportConfig, compile_service, load_spec

- ``spec``: our declarative service spec (``ServiceSpec``, ``load_spec``);
- ``importers``: MCP tools/list dumps, OpenAPI 3 / Swagger 2, the shared specs file;
- ``planner``: a raw service -> a spec (entities, behaviours, bindings), or reasons;
- ``compiler``: a spec -> a kernel ``Service`` (tables, tools, seed from the world);
- ``gate``: contract tests in subprocesses with a time limit -> a typed report;
- ``worldmodel``: answers for simulated tools (offline, or any litellm model);
- ``codeloop``: an LLM writes the tools the compiler cannot express, the gate judges;
- ``catalog``: what passed, stored compactly and served to the registry by name;
- ``cli``: ``generator import | verify | catalog | show``.

See ``docs/generator.md``.
"""

from generator.compiler import compile_service
from generator.pipeline import ImportConfig, ImportResult, import_file
from generator.spec import ServiceSpec, SpecError, load_spec

__all__ = ["ImportConfig", "ImportResult", "ServiceSpec", "SpecError", "compile_service", "import_file", "load_spec"]
