"""The compiler: a ``ServiceSpec`` becomes a kernel ``Service`` (tables, tools, seed)."""

from generator.compiler.runtime import ServiceRuntime
from generator.compiler.service import CompileError, compile_service

__all__ = ["CompileError", "ServiceRuntime", "compile_service"]
