"""The Z-machine story file check: frotz would end the process on these files; we raise DataError."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym_budget.errors import DataError
from agentgym_budget.tasks.textworld import story_file
from agentgym_budget.tasks.textworld.story_file import check_story_file


def _word(data: bytearray, offset: int, value: int) -> None:
    data[offset : offset + 2] = value.to_bytes(2, "big")


@pytest.fixture()
def story(coin_game_path) -> bytearray:
    return bytearray(Path(coin_game_path).read_bytes())


def test_a_generated_game_passes(coin_game_path):
    check_story_file(coin_game_path)


HEADER_DAMAGES = {
    "shorter than the header": (lambda d: d[:40], "fewer than the 64-byte header"),
    "not a story file": (lambda d: b"PK\x03\x04" + d[4:], "version byte is 80"),
    "truncated": (lambda d: d[: len(d) // 3], "the file is truncated"),
    "length field zeroed": (lambda d: (_word(d, 0x1A, 0), d)[1], "less than the header"),
    "bit flip in the code": (lambda d: (d.__setitem__(len(d) // 2, d[len(d) // 2] ^ 4), d)[1], "checksum"),
    "checksum field": (lambda d: (_word(d, 0x1C, 0x1234), d)[1], "checksum is"),
    "static memory above high memory": (lambda d: (_word(d, 0x0E, 0xFFF0), d)[1], "below its static memory"),
    "object table outside dynamic memory": (lambda d: (_word(d, 0x0A, 0xFFF0), d)[1], "object table"),
    "globals outside dynamic memory": (lambda d: (_word(d, 0x0C, 0x0E00 + (d[0x0E] << 8)), d)[1], "global variables"),
}


@pytest.mark.parametrize("damage", list(HEADER_DAMAGES))
def test_damaged_story_files_raise_data_error_naming_the_file(tmp_path, story, damage):
    change, reason = HEADER_DAMAGES[damage]
    path = tmp_path / "game.z8"
    path.write_bytes(bytes(change(story)))
    with pytest.raises(DataError, match=reason) as err:
        check_story_file(path)
    assert str(path) in str(err.value)


def test_every_single_bit_flip_after_the_header_is_detected(story):
    declared = int.from_bytes(story[0x1A:0x1C], "big") * 8
    for offset in range(0x40, declared, 997):
        for bit in (0, 7):
            story[offset] ^= 1 << bit
            assert story_file._problem(bytes(story)) is not None, (offset, bit)
            story[offset] ^= 1 << bit
    assert story_file._problem(bytes(story)) is None


def test_a_checked_file_is_read_again_only_when_it_changes(tmp_path, story, monkeypatch):
    path = tmp_path / "game.z8"
    path.write_bytes(bytes(story))
    reads = []
    real = story_file._problem
    monkeypatch.setattr(story_file, "_problem", lambda data: reads.append(1) or real(data))
    for _ in range(3):
        check_story_file(path)
    assert len(reads) == 1
    path.write_bytes(bytes(story[: len(story) // 2]))
    with pytest.raises(DataError):
        check_story_file(path)


def test_a_missing_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match=r"nowhere\.z8"):
        check_story_file(tmp_path / "nowhere.z8")
