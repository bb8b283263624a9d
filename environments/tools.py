"""Tool declaration: a tool is declared once (name, description, JSON-schema parameters)
and exposed as an OpenAI tool schema, an MCP tool and a validated Python call.

Declare tools as methods of an `Environment` subclass::

    @tool("Evaluate an arithmetic expression.")
    def calculate(self, expression: Annotated[str, "e.g. '3 * (4 + 5)'"]) -> str: ...

The JSON schema is derived from the signature (pydantic), unless `parameters=` is given.
`Annotated[T, "text"]` (or `Annotated[T, Field(description=...)]`) documents an argument.
A tool returns the observation text, or a `Final` when it ends the episode.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, get_args, get_origin, get_type_hints

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError
from pydantic import Field, create_model

from services.common.wire import ToolFunction, ToolSpec

TOOL_ATTR = "__slipstream_tool__"


class ToolFailure(Exception):
    """Raise inside a tool to return a clear, expected failure to the agent as an
    observation (kind 'tool_error', or 'refused' for policy refusals)."""

    def __init__(self, message: str, *, kind: str = "tool_error") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


class BadArguments(Exception):
    """The arguments did not match the tool's JSON schema."""


@dataclass(frozen=True)
class Final:
    """Returned by a finishing tool (`answer`, `submit`, `finish`): the episode ends and
    `answer` becomes `StepResult.info["final_answer"]`."""

    answer: str
    observation: str = "Answer recorded. The episode is over."
    reward: float | None = None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolDef:
    """One declared tool."""

    name: str
    description: str
    parameters: dict[str, Any]
    method: Callable[..., Any]
    final: bool = False

    def spec(self) -> ToolSpec:
        return ToolSpec(
            function=ToolFunction(
                name=self.name, description=self.description, parameters=self.parameters
            )
        )

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Check `arguments` against the schema; return them with declared defaults filled
        in. Raises BadArguments with a message naming the offending field."""
        if not isinstance(arguments, dict):
            raise BadArguments("arguments must be a JSON object")
        validator = _validator(self)
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        if errors:
            raise BadArguments("; ".join(_describe(e) for e in errors[:3]))
        return arguments


_VALIDATORS: dict[int, Draft202012Validator] = {}


def _validator(tool_def: ToolDef) -> Draft202012Validator:
    """One compiled validator per declared tool (schemas are immutable once declared)."""
    key = id(tool_def.parameters)
    validator = _VALIDATORS.get(key)
    if validator is None or validator.schema is not tool_def.parameters:
        Draft202012Validator.check_schema(tool_def.parameters)
        validator = _VALIDATORS[key] = Draft202012Validator(tool_def.parameters)
    return validator


def _describe(err: SchemaError) -> str:
    where = ".".join(str(p) for p in err.path)
    return f"{where}: {err.message}" if where else err.message


def _annotated_field(annotation: Any, default: Any) -> tuple[Any, Any]:
    """Turn `Annotated[T, "desc"]` into (T, Field(default, description=desc))."""
    if get_origin(annotation) is Annotated:
        base, *extras = get_args(annotation)
        texts = [x for x in extras if isinstance(x, str)]
        others = [x for x in extras if not isinstance(x, str)]
        if texts:
            desc = " ".join(texts)
            annotation = Annotated[(base, *others)] if others else base
            return annotation, Field(default, description=desc)
    return annotation, default


def schema_from_signature(func: Callable[..., Any]) -> dict[str, Any]:
    """A JSON schema (object) for `func`'s parameters, `self` excluded."""
    hints = get_type_hints(func, include_extras=True)
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(func).parameters.items():
        if name == "self":
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {func.__name__}: *args/**kwargs are not supported")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = _annotated_field(hints.get(name, Any), default)
    model = create_model(f"{func.__name__}_args", **fields)  # type: ignore[call-overload]
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema["additionalProperties"] = False
    schema.setdefault("properties", {})
    return schema


def tool(
    description: str,
    *,
    name: str | None = None,
    parameters: dict[str, Any] | None = None,
    final: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark an Environment method as a tool. `final=True` marks the finishing tool."""

    def mark(func: Callable[..., Any]) -> Callable[..., Any]:
        setattr(
            func,
            TOOL_ATTR,
            {
                "name": name or func.__name__,
                "description": description,
                "parameters": parameters,
                "final": final,
            },
        )
        return func

    return mark


def collect_tools(cls: type) -> dict[str, ToolDef]:
    """Every @tool method of `cls` (and its bases), by tool name, in declaration order."""
    tools: dict[str, ToolDef] = {}
    for klass in reversed(cls.__mro__):
        for attr, value in vars(klass).items():
            meta = getattr(value, TOOL_ATTR, None)
            if meta is None:
                continue
            params = meta["parameters"] or schema_from_signature(value)
            tools[meta["name"]] = ToolDef(
                name=meta["name"],
                description=meta["description"],
                parameters=params,
                method=getattr(cls, attr),
                final=meta["final"],
            )
    return tools
