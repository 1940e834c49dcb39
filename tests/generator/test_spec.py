"""The declarative spec: what validates, and how problems are reported."""

from __future__ import annotations

import copy

import pytest

from generator.spec import SpecError, load_spec
from tests.generator.conftest import notes_spec_data


def test_the_notes_spec_validates_and_round_trips_through_json() -> None:
    spec = load_spec(notes_spec_data())
    again = load_spec(spec.model_dump_json(exclude_none=True))
    assert again == spec
    assert spec.entity("note").owner_field.name == "notebook_id"  # type: ignore[union-attr]
    assert spec.tool("archive_note").behaviour.transition.to == "archived"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["tools"][1]["behaviour"].update(entity="nothing"), "behaviour entity 'nothing' is not an entity"),
        (lambda d: d["tools"][0]["bindings"]["title"].update(column="missing"), "bound to 'missing', not a column"),
        (lambda d: d["tools"][1].update(effect="write"), "effect must be 'read'"),
        (lambda d: d["tools"][1].update(name="Get Note"), "name must match"),
        (lambda d: d["entities"][0]["fields"].append({"name": "NAME", "type": "string"}), "declared twice"),
        (lambda d: d["entities"][1]["fields"][0].update(ref="folder"), "refers to unknown entity 'folder'"),
        (lambda d: d["tools"][1].update(bindings={}), "needs a parameter bound as its key"),
        (lambda d: d["tools"].append(copy.deepcopy(d["tools"][1])), "tool 'get_note' is declared twice"),
        (lambda d: d["entities"][0]["fields"].append({"name": "x", "type": "string", "semantic": "shoe_size"}), "unknown semantic type"),
        (lambda d: d["tools"][0].pop("description"), "tools.0.description: Field required"),
    ],
)
def test_invalid_specs_say_what_is_wrong_and_where(edit, message: str) -> None:  # type: ignore[no-untyped-def]
    data = notes_spec_data()
    edit(data)
    with pytest.raises(SpecError) as caught:
        load_spec(data)
    text = str(caught.value)
    assert message in text
    assert text.startswith("spec 'notes' is invalid:")
    assert "Traceback" not in text


def test_a_spec_that_is_not_json_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="invalid"):
        load_spec("{not json")
