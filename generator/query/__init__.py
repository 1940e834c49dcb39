"""The query and address languages of products (Drive ``q``, JQL, Gmail search, Sheets A1 ranges), on one
small parser with a dialect per product, answered from an episode's rows.

``dialect_for`` says which language a tool's parameter speaks (read from the spec at load time, so no
rebuild of a catalog is needed); ``parse`` turns a query into a ``Query``; ``select`` answers it over rows.
A query a dialect cannot read raises ``QueryError``: which part, and what the dialect supports.
"""

from generator.query.ast import And, Call, Cond, Not, Or, Query, QueryError
from generator.query.dialects import DIALECTS, Dialect, dialect_for, parse
from generator.query.evaluate import Resolver, select

__all__ = ["DIALECTS", "And", "Call", "Cond", "Dialect", "Not", "Or", "Query", "QueryError", "Resolver", "dialect_for", "parse",
           "select"]
