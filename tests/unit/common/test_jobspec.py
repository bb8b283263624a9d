from pathlib import Path

import pytest

from services.common.jobspec import JobSpec, JobSpecError, load_job_spec, parse_job_spec

EXAMPLES = sorted(Path(__file__).resolve().parents[3].joinpath("examples").glob("*.yaml"))
MINIMAL = {"environments": [{"name": "arithmetic"}]}


def test_minimal_spec_fills_defaults() -> None:
    spec = parse_job_spec(MINIMAL)
    assert spec.group_size == 8 and spec.batch_size == 32
    assert spec.groups_per_batch == 4
    assert spec.algorithm.advantage == "grpo"


def test_typo_key_is_rejected_with_its_path() -> None:
    with pytest.raises(JobSpecError) as info:
        parse_job_spec({**MINIMAL, "algorithm": {"learning_rat": 1e-5}})
    assert ("algorithm.learning_rat", "unknown key 'learning_rat'") in info.value.problems
    assert "algorithm.learning_rat" in str(info.value)


def test_typo_inside_a_list_names_the_index(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("environments:\n  - name: sql\n    wieght: 2\n")
    with pytest.raises(JobSpecError) as info:
        load_job_spec(path)
    assert info.value.problems[0][0] == "environments[0].wieght"
    assert str(path) in str(info.value)


def test_batch_must_hold_whole_groups() -> None:
    with pytest.raises(JobSpecError, match="multiple of group_size"):
        parse_job_spec({**MINIMAL, "group_size": 3, "batch_size": 8})


def test_bad_value_names_field_and_reason() -> None:
    with pytest.raises(JobSpecError) as info:
        parse_job_spec({**MINIMAL, "max_staleness": -1})
    path, message = info.value.problems[0]
    assert path == "max_staleness" and "greater than or equal to 0" in message


def test_yaml_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("- just\n- a list\n")
    with pytest.raises(JobSpecError, match="must be a mapping"):
        load_job_spec(path)


def test_json_roundtrip_is_identity() -> None:
    spec = parse_job_spec({**MINIMAL, "max_staleness": 0, "seed": 7})
    assert JobSpec.model_validate_json(spec.model_dump_json()) == spec


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_spec_is_valid(path: Path) -> None:
    load_job_spec(path)
