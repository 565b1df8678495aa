"""The sm90a schedule names Python knows are the compiler's: one table,
include/attn/Support/Sm90Schedules.h, which families.SM90A_SCHEDULES
copies (a header Python cannot include)."""

import re
from pathlib import Path

import pytest

from attn import families

HEADER = (Path(__file__).resolve().parents[2] / "include" / "attn" /
          "Support" / "Sm90Schedules.h")


def header_schedules():
    text = HEADER.read_text()
    table = text[text.index("kSm90Schedules[] = {"):]
    table = table[:table.index("};")]
    return tuple((name, suffix, backward == "true") for name, suffix, backward
                 in re.findall(r'\{"([^"]*)", "([^"]*)", (true|false)\}',
                               table))


def test_python_schedules_are_the_headers():
    schedules = header_schedules()
    assert len(schedules) == 9  # the parse found the table
    assert families.SM90A_SCHEDULES == schedules


@pytest.mark.parametrize("name,suffix,backward",
                         families.SM90A_SCHEDULES)
def test_every_schedule_names_a_tile_and_back(name, suffix, backward):
    tile = families.tile_name(128 if not backward else 64, 128, 16, 2,
                              family="sm90a", schedule=name)
    assert tile.endswith(suffix)
    assert families.parse_tile(tile)["schedule"] == name
    assert families.is_backward_schedule(name) == backward
